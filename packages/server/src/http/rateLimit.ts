import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import {
  type RateLimitSettings,
  type RateLimitState,
  rateLimitHit,
  rateLimitState,
} from "../operations/rateLimitWindow.js";
import type { CounterStore } from "../store/interfaces.js";
import { remainingBudget, within } from "./budget.js";
import type { RouteSettings } from "./types.js";

/** The RateLimit headers of every counted answer; over the limit, the 429 itself. */
export function applyRateLimit(reply: FastifyReply, state: RateLimitState): void {
  reply.header("ratelimit-limit", state.limit);
  reply.header("ratelimit-remaining", state.remaining);
  if (state.retryAfterSeconds !== undefined) {
    throw new ApiError("rate_limited", undefined, { "retry-after": String(state.retryAfterSeconds) });
  }
}

/**
 * Fixed-window limit per API key and operation, counted in the store so every process shares it
 * (the routes off verify's path count with Store.patient's counters).
 * Runs after authentication. Verify counts its request in the same store call as its velocity
 * counters instead (operations/verify), so this hook is not on its route.
 */
export function rateLimiter(
  counters: Pick<CounterStore, "hit">,
  limits: RateLimitSettings,
  clock: () => number,
) {
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = request.caller;
    if (!caller) return;
    const settings = request.routeOptions.config.warden as RouteSettings;
    const now = clock();
    // A store fault here is the route's 503 (the error handler); verify does not use this hook.
    const [reading] = await within(
      remainingBudget(settings, reply.elapsedTime),
      counters.hit([rateLimitHit(limits, caller.key.id, settings.operation, caller.tenant.id)], now),
    );
    applyRateLimit(reply, rateLimitState(limits, reading, now));
  };
}
