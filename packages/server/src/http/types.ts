import type { Caller } from "../operations/caller.js";
import type { Scope } from "../store/interfaces.js";

/** Per-route settings read by the cross-cutting hooks. */
export interface RouteSettings {
  /** Scope the API key must carry. */
  scope: Scope;
  /** Name used for rate-limit and idempotency scoping. */
  operation: string;
  /**
   * What a store fault on the way in becomes: "degrade" lets the handler answer (verify's degraded
   * challenge); otherwise the error code to answer with (503).
   */
  onStoreFault: "degrade" | "store_unavailable";
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the authentication hook; null until then, and on verify when the store was unreachable. */
    caller: Caller | null;
    /** Authentication could not reach the store (verify only; other routes answer 503). */
    storeFault: boolean;
  }
  interface FastifyContextConfig {
    warden?: RouteSettings;
  }
}
