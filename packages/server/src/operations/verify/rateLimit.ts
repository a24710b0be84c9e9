import type { CounterHit } from "../../store/interfaces.js";
import { type RateLimitState, rateLimitState } from "../rateLimitWindow.js";
import type { VerifyDeps, VerifyResult } from "./verifyDeps.js";

/**
 * Verify's rate limit per API key, counted once per request: alone where no velocity counters are hit
 * with it (a replay, a re-verify before it redeems its clear), otherwise in the same store call as the
 * attempt's velocity counters (verify.ts).
 */

export async function countAlone(
  deps: VerifyDeps,
  limitHit: CounterHit,
  now: number,
): Promise<RateLimitState> {
  return rateLimitState(deps.rateLimit, (await deps.store.counters.hit([limitHit], now))[0], now);
}

/** Answered by the route from `rateLimit`: the 429 with its Retry-After (http/rateLimit.ts). */
export function rateLimited(limit: RateLimitState): VerifyResult {
  return { ok: false, code: "rate_limited", rateLimit: limit };
}

export const withLimit = (result: VerifyResult, limit: RateLimitState): VerifyResult => ({
  ...result,
  rateLimit: limit,
});
