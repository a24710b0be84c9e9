/**
 * The store contract, console sign-ins (ConsoleSessionStore). Each method states its guarantees;
 * "atomic" is as store/interfaces.ts defines it.
 */

import type { ApiKeyRecord } from "./keys.js";
import type { Tenant } from "./tenants.js";

/** A console sign-in, known by the SHA-256 of its cookie's secret. */
export interface ConsoleSession {
  idHash: string;
  tenantId: string;
  keyId: string;
  createdAt: number;
  expiresAt: number;
}
export interface ConsoleSessionStore {
  create(session: ConsoleSession): Promise<void>;
  /**
   * The session with the key it was opened with, when the session has not expired at `now`; a
   * revoked key's sessions are returned with the key's revokedAt set (the caller refuses them).
   */
  find(
    idHash: string,
    now: number,
  ): Promise<{ session: ConsoleSession; key: ApiKeyRecord; tenant: Tenant } | undefined>;
  /** Ends the session; resolves whether it existed. */
  delete(idHash: string): Promise<boolean>;
  /** Deletes expired sessions; resolves how many. */
  purgeExpired(now: number): Promise<number>;
}
