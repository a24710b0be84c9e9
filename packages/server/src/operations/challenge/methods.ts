import type { ChallengeMethod } from "../../domain.js";

/**
 * Spec, challenge: the first entry of `prefer` that can be issued for this tenant wins; the floor is
 * proof_of_work, and email_otp is never selected. `issuable` is what this tenant can be issued now:
 * proof_of_work always, payment_preauth when the tenant has a payment provider configured,
 * web_bot_auth_stepup when the event carried a verified Web Bot Auth signature (or any Web Bot Auth
 * signature, when the tenant's policy asks for step-up), device_attestation when the tenant's policy
 * names a WebAuthn relying party (challenge.deviceAttestation).
 */
export function selectMethod(
  prefer: readonly string[] | undefined,
  issuable: ReadonlySet<ChallengeMethod>,
): ChallengeMethod {
  for (const m of prefer ?? []) {
    if (m === "email_otp") continue;
    if (issuable.has(m as ChallengeMethod)) return m as ChallengeMethod;
  }
  return "proof_of_work";
}
