import type { Scope } from "../domain.js";
import type { ErrorCode } from "../errors.js";
import type { Caller } from "../operations/caller.js";

/** Per-route settings read by the cross-cutting hooks. */
export interface RouteSettings {
  /** Scope the API key must carry. */
  scope: Scope;
  /** Name used for rate-limit and idempotency scoping. */
  operation: string;
  /**
   * What a store fault becomes: "degrade" lets the handler answer (verify's degraded challenge);
   * otherwise the 503 error code to answer with.
   */
  onStoreFault: "degrade" | ErrorCode;
  /**
   * With "degrade": the whole request's deadline in ms from arrival (verify's). Store calls in the
   * hooks get only what is left of it, so authentication and the rate limit cannot eat the budget.
   */
  deadlineMs?: number;
  /** A read route that also accepts the operator console's session cookie (GET only; console/session.ts). */
  consoleSession?: boolean;
  /**
   * With consoleSession: the cookie also authenticates this route's writes, when they come from the
   * console's own page (same Origin and the x-warden-console header; console/session.ts).
   */
  consoleWrite?: boolean;
  /** Error codes for invalid fields, by field path (e.g. value → invalid_value); default invalid_field. */
  fieldCodes?: Readonly<Record<string, ErrorCode>>;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the authentication hook; null until then, and on verify when the store was unreachable. */
    caller: Caller | null;
    /** Authentication could not reach the store (verify only; other routes answer 503). */
    storeFault: boolean;
    /** When the body started to be read (after the onRequest hooks), performance.now(). */
    bodyFrom: number;
    /**
     * Milliseconds spent waiting for the caller's body: the caller's pace, which verify's deadline
     * does not count (a body sent slowly must not turn into the degraded answer).
     */
    bodyWaitMs: number;
  }
  interface FastifyContextConfig {
    warden?: RouteSettings;
  }
}
