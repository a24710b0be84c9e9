import type { ChallengeMethod } from "../../store/interfaces.js";

export const CHALLENGE_METHODS: readonly ChallengeMethod[] = [
  "payment_preauth",
  "proof_of_work",
  "device_attestation",
  "web_bot_auth_stepup",
  "email_otp",
];

/**
 * Methods this release can issue. payment_preauth (a configured payment provider), web_bot_auth_stepup
 * (a verified Web Bot Auth identity) and device_attestation are not issuable yet; email_otp is never
 * selected (spec). Skipped entries are simply passed over.
 */
const ISSUABLE: ReadonlySet<ChallengeMethod> = new Set(["proof_of_work"]);

/** Spec, challenge: the first issuable entry of `prefer` wins; the floor is proof_of_work. */
export function selectMethod(prefer: readonly string[] | undefined): ChallengeMethod {
  for (const m of prefer ?? []) {
    if (m === "email_otp") continue;
    if (ISSUABLE.has(m as ChallengeMethod)) return m as ChallengeMethod;
  }
  return "proof_of_work";
}
