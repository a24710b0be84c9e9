import type { CounterHit, CounterReading } from "../store/interfaces.js";

/**
 * The per-key rate limit as counters: which counter a request adds to and where the key stands
 * after it. Shared by the HTTP hook (challenge, feedback, ledger) and verify, which counts its
 * request in the same store call as its velocity counters.
 */
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

/** Retry-After is clamped to 1..60 seconds (docs/api.md#errors). */
export function retryAfterSeconds(msUntilReset: number): number {
  return Math.min(60, Math.max(1, Math.ceil(msUntilReset / 1000)));
}

/**
 * The counter one request of `operation` with this API key adds to (fixed window per key and
 * operation), placed with its tenant's other counters when the key has one.
 */
export function rateLimitHit(
  limits: RateLimitSettings,
  keyId: string,
  operation: string,
  tenantId?: string,
): CounterHit {
  const hit = { name: `rl:${keyId}:${operation}`, windowMs: limits.windowSeconds * 1000 };
  return tenantId === undefined ? hit : { ...hit, tenantId };
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
