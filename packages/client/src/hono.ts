/**
 * `@warden/client/hono`: everything the package exports, with the Hono gate typed for Hono and
 * `c.get("warden")` declared in Hono's ContextVariableMap.
 */
import type { Handler, MiddlewareHandler } from "hono";
import type { ChallengeRouteOptions, GateOptions, GateVerdict } from "./gates/core.js";
import * as gates from "./gates/hono.js";

export * from "./index.js";

declare module "hono" {
  interface ContextVariableMap {
    /**
     * What wardenMiddleware hands a route it let through: the verdict, its checked receipt and the
     * form to act on. Set on the routes behind wardenMiddleware only.
     */
    warden: GateVerdict;
  }
}

type PeerOption = NonNullable<Parameters<typeof gates.wardenMiddleware>[0]["remoteAddress"]>;
type HonoRouteOptions = ChallengeRouteOptions & { remoteAddress?: PeerOption };

// The gates are written against the parts of Hono they use (hono.ts in gates/), so that the package
// needs no Hono at run time; these give them Hono's own types.
export const wardenMiddleware = (opts: GateOptions & { remoteAddress?: PeerOption }): MiddlewareHandler =>
  gates.wardenMiddleware(opts) as unknown as MiddlewareHandler;
export const wardenChallengeHandlers = (
  opts: HonoRouteOptions,
): { page: Handler; issue: Handler; complete: Handler } =>
  gates.wardenChallengeHandlers(opts) as unknown as { page: Handler; issue: Handler; complete: Handler };

/** Registers POST `${base}/page`, `/issue` and `/complete` (default base /warden/challenge) on a Hono app. */
export function registerWardenChallengeRoutes(
  app: { post(path: string, handler: Handler): unknown },
  opts: HonoRouteOptions & { base?: string },
): void {
  const handlers = wardenChallengeHandlers(opts);
  const base = opts.base ?? "/warden/challenge";
  app.post(`${base}/page`, handlers.page);
  app.post(`${base}/issue`, handlers.issue);
  app.post(`${base}/complete`, handlers.complete);
}
