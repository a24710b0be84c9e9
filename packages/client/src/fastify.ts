/**
 * `@warden/client/fastify`: everything the package exports, with the Fastify plugin and gate typed
 * for Fastify and `request.warden` declared on Fastify's request.
 */
import type { FastifyPluginAsync, preHandlerAsyncHookHandler } from "fastify";
import type { ChallengeRouteOptions, GateOptions, GateVerdict } from "./gates/core.js";
import * as gates from "./gates/fastify.js";

export * from "./index.js";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * What wardenPreHandler hands a route it let through: the verdict, its checked receipt and the
     * form to act on. Set on the routes behind wardenPreHandler only (null on any other).
     */
    warden: GateVerdict;
  }
}

// The gates are written against the parts of Fastify they use (fastify.ts in gates/), so that the
// package needs no Fastify at run time; these give them Fastify's own types.
export const wardenFastify = gates.wardenFastify as unknown as FastifyPluginAsync<
  ChallengeRouteOptions & { base?: string }
>;
export const wardenPreHandler = (opts: GateOptions): preHandlerAsyncHookHandler =>
  gates.wardenPreHandler(opts) as unknown as preHandlerAsyncHookHandler;
