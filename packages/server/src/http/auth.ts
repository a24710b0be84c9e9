import type { FastifyReply, FastifyRequest } from "fastify";
import { hashApiKey, isWellFormedApiKey } from "../admin/apiKeys.js";
import { ApiError } from "../errors.js";
import type { Caller } from "../operations/caller.js";
import { type Store, StoreUnavailableError } from "../store/interfaces.js";
import { remainingBudget, within } from "./budget.js";
import type { RouteSettings } from "./types.js";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The caller on routes that never degrade: the authentication hook has set it or answered already.
 * (Only verify can reach its handler without one, and it answers the degraded challenge instead.)
 */
export function requireCaller(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error("authentication hook did not run on this route");
  return request.caller;
}

/** Last callers seen per key hash, in memory only; consulted only while the store cannot answer. */
class LastKnownCallers {
  private readonly entries = new Map<string, Caller>();
  constructor(private readonly max: number) {}
  remember(hash: string, caller: Caller): void {
    this.entries.delete(hash);
    this.entries.set(hash, caller);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
  recall(hash: string): Caller | undefined {
    return this.entries.get(hash);
  }
}

/**
 * The authentication hook: Bearer API key → caller, then the route's scope. Every request looks the
 * key up in the store, so a revocation takes effect at once in every process.
 */
export function authenticator(store: Store) {
  const lastKnown = new LastKnownCallers(10_000);
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const settings = request.routeOptions.config.warden as RouteSettings;
    const match = BEARER.exec(request.headers.authorization ?? "");
    const apiKey = match?.[1];
    if (!apiKey || !isWellFormedApiKey(apiKey)) throw new ApiError("invalid_api_key");
    const hash = hashApiKey(apiKey);
    let caller: Caller | undefined;
    try {
      const found = await within(
        remainingBudget(settings, reply.elapsedTime),
        store.apiKeys.findByHash(hash),
      );
      if (found && found.key.revokedAt === null) {
        caller = { key: found.key, tenant: found.tenant };
        lastKnown.remember(hash, caller);
      }
    } catch (err) {
      if (!(err instanceof StoreUnavailableError) || settings.onStoreFault !== "degrade") throw err;
      request.log.warn({ err }, "authentication could not reach the store");
      request.storeFault = true;
      caller = lastKnown.recall(hash);
      if (caller && !caller.key.scopes.includes(settings.scope)) {
        throw new ApiError("insufficient_scope", `This API key lacks the ${settings.scope} scope.`);
      }
      request.caller = caller ?? null;
      return;
    }
    if (!caller) throw new ApiError("invalid_api_key");
    if (!caller.key.scopes.includes(settings.scope)) {
      throw new ApiError("insufficient_scope", `This API key lacks the ${settings.scope} scope.`);
    }
    request.caller = caller;
  };
}
