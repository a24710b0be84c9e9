/**
 * The store contract, aPI keys and the signing keys of verdict tokens (ApiKeyStore,
 * SigningKeyStore). Each method states its guarantees; "atomic" is as store/interfaces.ts defines
 * it.
 */

import type { Scope } from "../../domain.js";
import type { Tenant } from "./tenants.js";

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  scopes: Scope[];
  logOnly: boolean;
  createdAt: number;
  revokedAt: number | null;
}

export interface ApiKeyStore {
  /** Stores a key by the hash of its secret; the secret itself is never given to the store. */
  create(record: ApiKeyRecord, keyHash: string): Promise<void>;
  /** The key and its tenant for a secret's hash, or undefined. Revoked keys are returned with revokedAt set. */
  findByHash(keyHash: string): Promise<{ key: ApiKeyRecord; tenant: Tenant } | undefined>;
  list(tenantId: string): Promise<ApiKeyRecord[]>;
  /** Atomic: marks the key revoked; resolves false when the key is unknown or already revoked. */
  revoke(keyId: string, at: number): Promise<boolean>;
  /** Whether the key exists and is not revoked, read now. */
  isActive(keyId: string): Promise<boolean>;
}

export interface SigningKeyRecord {
  kid: string;
  /** Private JWK (ES256) as JSON text. */
  privateJwk: string;
  publicJwk: string;
  createdAt: number;
  /** Set when the key stops signing; it stays published until publishUntil. */
  retiredAt: number | null;
  publishUntil: number | null;
}

export interface SigningKeyStore {
  /** Keys still published at `now` (not retired, or retired with publishUntil > now), newest first. */
  listPublished(now: number): Promise<SigningKeyRecord[]>;
  /**
   * Atomic: inserts `next` and retires every other active key (publishUntil = now + keep), in one
   * transaction, so there is exactly one signer after any number of concurrent rotations finish.
   */
  rotate(next: SigningKeyRecord, keepPublishedMs: number): Promise<void>;
  /** Atomic: inserts `first` only when no active key exists; resolves whether it was inserted. */
  insertIfNone(first: SigningKeyRecord): Promise<boolean>;
}
