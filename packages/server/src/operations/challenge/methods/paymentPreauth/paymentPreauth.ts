import { Type } from "@sinclair/typebox";
import { type Method, refuse } from "../../method.js";
import { CHALLENGE_METADATA_KEY, checkSetupIntent } from "./stripeSetupIntents.js";

/**
 * payment_preauth: a Stripe SetupIntent, confirmed by the client, naming this challenge
 * (stripeSetupIntents.ts checks the provider's result). Issuable to a tenant with a payment provider
 * configured; a SetupIntent clears one challenge only.
 */
export const paymentPreauthMethod: Method = {
  name: "payment_preauth",
  proof: {
    // Only under this name (docs/api.md#post-v1challenge-and-re-verify): a payment proof has no bare form.
    names: ["provider_setup_intent"],
    form: "{ method: provider_setup_intent, setupIntentId }",
    members: { setupIntentId: Type.Optional(Type.String({ maxLength: 255 })) },
  },
  // Only asked when the caller prefers it (challenge.ts): the provider key is read from the store.
  issuable: async ({ deps, tenantId }) => Boolean(await deps.store.tenants.paymentKey(tenantId)),
  seal: (_issue, challengeId) => ({
    difficulty: null,
    seed: null,
    instructions: {
      type: "stripe_setup_intent",
      metadata: { [CHALLENGE_METADATA_KEY]: challengeId },
      steps:
        "Create and confirm a Stripe SetupIntent with this metadata (no charge is made), then complete with proof { method: provider_setup_intent, setupIntentId }.",
    },
  }),
  async check({ deps, tenantId, challenge, proof }) {
    const secretKey = await deps.store.tenants.paymentKey(tenantId);
    if (!secretKey) {
      // Removed since the challenge was issued: no retry can prove it (not a retryable 503).
      return refuse(
        "payment_not_succeeded",
        "No payment provider is configured for this tenant any more; this challenge cannot be proved. Issue a fresh one.",
      );
    }
    const setupIntentId = typeof proof.setupIntentId === "string" ? proof.setupIntentId : "";
    const check = await checkSetupIntent(secretKey, deps.payment, setupIntentId, challenge);
    if (!check.ok) return refuse(check.code, `The payment proof was not accepted: ${check.why}.`);
    return {
      ok: true,
      singleUse: {
        ref: setupIntentId,
        reused: refuse(
          "payment_not_succeeded",
          "The payment proof was not accepted: this SetupIntent already cleared another challenge.",
        ),
      },
    };
  },
};
