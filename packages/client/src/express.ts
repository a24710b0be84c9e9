/**
 * `@warden/client/express`: everything the package exports, with the Express gate typed for Express
 * (its RequestHandler) and `req.warden` declared on Express's Request.
 */
import type { RequestHandler } from "express";
import type { ChallengeRouteOptions, GateOptions, GateVerdict } from "./gates/core.js";
import * as gates from "./gates/express.js";

export * from "./index.js";

declare global {
  namespace Express {
    interface Request {
      /**
       * What wardenGate hands a route it let through: the verdict, its checked receipt and the form
       * to act on. Set on the routes behind wardenGate only (undefined on any other).
       */
      warden: GateVerdict;
    }
  }
}

// The gates are written against the parts of Express they use (express.ts in gates/), so that the
// package needs no Express at run time; these give them Express's own types.
export const wardenGate = (opts: GateOptions): RequestHandler =>
  gates.wardenGate(opts) as unknown as RequestHandler;
export const wardenChallengeRoutes = (opts: ChallengeRouteOptions & { base?: string }): RequestHandler =>
  gates.wardenChallengeRoutes(opts) as unknown as RequestHandler;
