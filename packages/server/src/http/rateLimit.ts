import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { type Store, StoreUnavailableError } from "../store/interfaces.js";
import { remainingBudget, within } from "./budget.js";
import type { RouteSettings } from "./types.js";

export interface RateLimitSettings {
  max: number;
  windowSeconds: number;
}

/** Retry-After is clamped to 1..60 seconds (spec, Limits). */
export function retryAfterSeconds(msUntilReset: number): number {
  return Math.min(60, Math.max(1, Math.ceil(msUntilReset / 1000)));
}

/**
 * Fixed-window limit per API key and operation, counted in the store so every process shares it.
 * Runs after authentication. On verify a store fault skips the limit: the verdict degrades anyway.
 */
export function rateLimiter(store: Store, limits: RateLimitSettings, clock: () => number) {
  const windowMs = limits.windowSeconds * 1000;
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = request.caller;
    if (!caller) return;
    const settings = request.routeOptions.config.warden as RouteSettings;
    const now = clock();
    let count: number;
    try {
      const [reading] = await within(
        remainingBudget(settings, reply.elapsedTime),
        store.counters.hit([{ name: `rl:${caller.key.id}:${settings.operation}`, windowMs }], now),
      );
      count = reading?.current ?? 0;
    } catch (err) {
      if (err instanceof StoreUnavailableError && settings.onStoreFault === "degrade") {
        request.storeFault = true;
        return;
      }
      throw err;
    }
    const remaining = Math.max(0, limits.max - count);
    reply.header("ratelimit-limit", limits.max);
    reply.header("ratelimit-remaining", remaining);
    if (count > limits.max) {
      const resetMs = windowMs - (now % windowMs);
      throw new ApiError("rate_limited", undefined, { "retry-after": String(retryAfterSeconds(resetMs)) });
    }
  };
}
