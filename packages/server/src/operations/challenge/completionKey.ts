import { canonicalJson, sha256Hex } from "../../lib/crypto.js";
import type { ChallengeRequest } from "./schema.js";

/**
 * A completion's identity when it carries an Idempotency-Key (docs/api.md#idempotency: the same key and
 * payload fingerprint for the same attempt): the key's hash and the hash of what it asked, recorded by
 * the update that clears the challenge. A retried completion whose answer was lost then replays the
 * clear instead of meeting 409 challenge_already_solved; any other completion of a cleared challenge
 * still does (docs/api.md#post-v1challenge-and-re-verify).
 */
export function completionKey(idempotencyKey: string, req: ChallengeRequest, session: string): string {
  const payload = canonicalJson({
    challengeId: req.challengeId,
    eventId: req.eventId,
    session,
    proof: req.proof,
  });
  return `${sha256Hex(idempotencyKey)}.${sha256Hex(payload)}`;
}

/** How a completion relates to the one that cleared the challenge. */
export function compareCompletion(
  recorded: string | null,
  mine: string | undefined,
): "same" | "same_key_other_payload" | "other" {
  if (recorded === null || mine === undefined) return "other";
  if (recorded === mine) return "same";
  return recorded.split(".")[0] === mine.split(".")[0] ? "same_key_other_payload" : "other";
}
