import type { ChallengeRecord, ClearRedemption } from "../../store/interfaces.js";

/**
 * Whether a re-verify may redeem a challenge's clear (docs/security-model.md, "Clears"). The store
 * re-checks every condition atomically when the verdict is recorded (events.record with `redeem`);
 * this reading only decides which verdict to build and, when the clear is refused, says why.
 */
export type ClearCheck =
  | { ok: true; challenge: ChallengeRecord; redemption: ClearRedemption }
  | { ok: false; why: string };

export interface ClearWindow {
  /** Earliest clear time still redeemable. */
  since: number;
  minutes: number;
}

export function checkClear(
  challenge: ChallengeRecord | undefined,
  session: string | undefined,
  attempt: string,
  window: ClearWindow,
): ClearCheck {
  const refuse = (why: string): ClearCheck => ({ ok: false, why });
  if (session === undefined) return refuse("the request carries no session");
  if (!challenge) return refuse("no such challenge for this tenant");
  if (challenge.session !== session) return refuse("it is bound to another session");
  if (challenge.attempt !== attempt) {
    return refuse("it was earned on another attempt: the action or the subject differs");
  }
  if (challenge.clearedAt === null) return refuse("it has not been solved");
  if (challenge.redeemedAt !== null) return refuse(ALREADY_USED);
  if (challenge.clearedAt < window.since)
    return refuse(`it was cleared more than ${window.minutes} minutes ago`);
  return {
    ok: true,
    challenge,
    redemption: {
      challengeId: challenge.id,
      eventId: challenge.eventId,
      session,
      attempt,
      clearedSince: window.since,
    },
  };
}

/** The first reason of a re-verify whose clear was not used. */
export const clearNotHonored = (why: string): string =>
  `The challenge was not honored (${why}); the attempt was scored.`;

export const ALREADY_USED = "another verify used or is using a clear of this attempt";

export const CLEARED_REASON =
  "A challenge bound to this session was solved; scoring was skipped. The clear covers this session only and is now used.";

/** A clear earned on a degraded verdict stands in for the checks that never ran: the attempt is scored. */
export const clearedAfterDegradedReason = (scored: string): string =>
  `A challenge solved after a degraded verdict cleared this attempt; the attempt was scored (${scored} without the clear), and a clear turns a challenge into allow, never a deny. The clear covers this session only and is now used.`;

export const DENY_NOT_CLEARED = "the attempt scores deny, and a clear never turns a deny into allow";

/**
 * The first reason of a re-verify that a degraded verdict's clear let be scored, and that scores deny:
 * the deny stands, and the clear is spent with it (the attempt ends denied; docs/api.md, "Attempts").
 */
export const DEGRADED_CLEAR_DENIED =
  "A challenge solved after a degraded verdict let this attempt be scored, and it scores deny: a clear never turns a deny into allow. The attempt ends denied; the clear covers this session only and is now used.";
