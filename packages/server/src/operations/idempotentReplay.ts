/**
 * Spec, Idempotency: the same key with the same payload fingerprint replays the stored response; the
 * same key with a different fingerprint is 409 idempotency_conflict. Shared by verify and feedback,
 * which hold the stored response in their own result shapes.
 */
export type ReplayOrConflict<T> =
  | { ok: true; body: T }
  | { ok: false; code: "idempotency_conflict"; message: string };

export function replayOrConflict<T>(sameFingerprint: boolean, body: T): ReplayOrConflict<T> {
  if (!sameFingerprint) {
    return {
      ok: false,
      code: "idempotency_conflict",
      message: "This idempotency key was used with a different payload; create a new key.",
    };
  }
  return { ok: true, body };
}
