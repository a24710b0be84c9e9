/**
 * The client-side retry policy (packages/client/README.md, "Retries"). Retried: network errors (and timeouts), 429, and 5xx answers
 * that carry an Error body. Not retried: any other 4xx. A Retry-After is waited at least; otherwise
 * exponential backoff with full jitter (base 1 s, factor 2, cap 60 s). At most 3 retries after the
 * first try. The caller keeps one Idempotency-Key per attempt across its retries.
 */
export interface RetryPolicy {
  /** Retries after the first try; at most 3 (docs/api.md#idempotency). */
  maxRetries: number;
  baseMs: number;
  factor: number;
  capMs: number;
}

export const SPEC_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 3,
  baseMs: 1000,
  factor: 2,
  capMs: 60_000,
});

/** What one try ended with, as far as retrying is concerned. */
export type TryOutcome =
  | { kind: "answer"; status: number; body: unknown; retryAfterSeconds: number | undefined }
  | { kind: "network"; error: unknown };

/** Whether the retry policy (docs/api.md#idempotency) retries this outcome. */
export function isRetryable(outcome: TryOutcome): boolean {
  if (outcome.kind === "network") return true;
  if (outcome.status === 429) return true;
  return outcome.status >= 500 && isErrorBody(outcome.body);
}

export function isErrorBody(body: unknown): body is { error: string; message: string; code: string } {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.error === "string" && typeof b.code === "string";
}

/**
 * How long to wait before retry number `retry` (0 for the first retry): at least Retry-After when the
 * answer carried one, otherwise a uniformly random time in [0, min(cap, base · factor^retry)).
 */
export function backoffMs(
  policy: RetryPolicy,
  retry: number,
  retryAfterSeconds: number | undefined,
  random: () => number,
): number {
  if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
  return Math.floor(random() * Math.min(policy.capMs, policy.baseMs * policy.factor ** retry));
}

/** Retry-After as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export interface RetryClock {
  sleep(ms: number): Promise<void>;
  random(): number;
  now(): number;
}

export const realClock: RetryClock = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
  now: Date.now,
};

/**
 * Runs `attempt` until it gives an outcome the policy does not retry, or the retries are spent;
 * resolves the last outcome and how many tries were made.
 */
export async function withRetries(
  attempt: () => Promise<TryOutcome>,
  policy: RetryPolicy | undefined,
  clock: RetryClock,
): Promise<{ outcome: TryOutcome; tries: number }> {
  let outcome = await attempt();
  let tries = 1;
  if (!policy) return { outcome, tries };
  for (let retry = 0; retry < policy.maxRetries && isRetryable(outcome); retry++) {
    const retryAfter = outcome.kind === "answer" ? outcome.retryAfterSeconds : undefined;
    await clock.sleep(backoffMs(policy, retry, retryAfter, clock.random));
    outcome = await attempt();
    tries++;
  }
  return { outcome, tries };
}
