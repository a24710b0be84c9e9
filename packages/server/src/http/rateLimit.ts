import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import type { CounterHit, CounterReading, Store } from "../store/interfaces.js";
import { remainingBudget, within } from "./budget.js";
import type { RouteSettings } from "./types.js";

export interface RateLimitSettings {
  max: number;
  windowSeconds: number;
}

/** Where a key stands in its window after this request was counted. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Set when this request is over the limit: seconds until the window resets, clamped. */
  retryAfterSeconds?: number;
}

/** Retry-After is clamped to 1..60 seconds (spec, Limits). */
export function retryAfterSeconds(msUntilReset: number): number {
  return Math.min(60, Math.max(1, Math.ceil(msUntilReset / 1000)));
}

/** The counter one request of `operation` with this API key adds to (fixed window per key and operation). */
export function rateLimitHit(limits: RateLimitSettings, keyId: string, operation: string): CounterHit {
  return { name: `rl:${keyId}:${operation}`, windowMs: limits.windowSeconds * 1000 };
}

export function rateLimitState(
  limits: RateLimitSettings,
  reading: CounterReading | undefined,
  now: number,
): RateLimitState {
  const count = reading?.current ?? 0;
  const state: RateLimitState = { limit: limits.max, remaining: Math.max(0, limits.max - count) };
  if (count > limits.max) {
    const windowMs = limits.windowSeconds * 1000;
    state.retryAfterSeconds = retryAfterSeconds(windowMs - (now % windowMs));
  }
  return state;
}

/** The RateLimit headers of every counted answer; over the limit, the 429 itself. */
export function applyRateLimit(reply: FastifyReply, state: RateLimitState): void {
  reply.header("ratelimit-limit", state.limit);
  reply.header("ratelimit-remaining", state.remaining);
  if (state.retryAfterSeconds !== undefined) {
    throw new ApiError("rate_limited", undefined, { "retry-after": String(state.retryAfterSeconds) });
  }
}

/**
 * Fixed-window limit per API key and operation, counted in the store so every process shares it.
 * Runs after authentication. Verify counts its request in the same store call as its velocity
 * counters instead (operations/verify), so this hook is not on its route.
 */
export function rateLimiter(store: Store, limits: RateLimitSettings, clock: () => number) {
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = request.caller;
    if (!caller) return;
    const settings = request.routeOptions.config.warden as RouteSettings;
    const now = clock();
    // A store fault here is the route's 503 (the error handler); verify does not use this hook.
    const [reading] = await within(
      remainingBudget(settings, reply.elapsedTime),
      store.counters.hit([rateLimitHit(limits, caller.key.id, settings.operation)], now),
    );
    applyRateLimit(reply, rateLimitState(limits, reading, now));
  };
}
