import Stripe from "stripe";
import type { ChallengeRecord } from "../../../../store/interfaces.js";
import type { PaymentSettings } from "../../method.js";

/** The SetupIntent metadata key that must name the challenge (Warden validates the provider's result only: docs/api.md#post-v1challenge-and-re-verify). */
export const CHALLENGE_METADATA_KEY = "warden_challenge_id";

export type SetupIntentCheck =
  | { ok: true }
  | { ok: false; code: "payment_not_succeeded"; why: string }
  | { ok: false; code: "payment_verification_unavailable"; why: string };

export const isStripeSecretKey = (key: string): boolean => /^sk_(test|live)_[A-Za-z0-9]{8,}$/.test(key);

/** One SDK client per secret key (bounded); each is configured once with the provider base and deadline. */
const clients = new Map<string, Stripe>();

function clientFor(secretKey: string, settings: PaymentSettings): Stripe {
  const cacheKey = `${settings.apiBase.href} ${settings.timeoutMs} ${secretKey}`;
  let client = clients.get(cacheKey);
  if (!client) {
    const protocol = settings.apiBase.protocol === "http:" ? "http" : "https";
    client = new Stripe(secretKey, {
      host: settings.apiBase.hostname,
      port: Number(settings.apiBase.port || (protocol === "http" ? 80 : 443)),
      protocol,
      timeout: settings.timeoutMs,
      // The client's own retry policy applies (docs/api.md#idempotency); Warden answers 503 at once.
      maxNetworkRetries: 0,
    });
    if (clients.size >= 1000) clients.delete(clients.keys().next().value as string);
    clients.set(cacheKey, client);
  }
  return client;
}

/**
 * Validates the provider's result for a payment_preauth challenge by retrieving the SetupIntent with
 * the official Stripe SDK. No money moves and nothing is captured: a SetupIntent authorizes nothing.
 * Succeeds only when the SetupIntent succeeded, its metadata names this challenge, its livemode matches
 * the key's mode, and it was created no earlier than the challenge was issued.
 */
export async function checkSetupIntent(
  secretKey: string,
  settings: PaymentSettings,
  setupIntentId: string,
  challenge: ChallengeRecord,
): Promise<SetupIntentCheck> {
  if (!/^seti_[A-Za-z0-9_]{1,250}$/.test(setupIntentId)) {
    return { ok: false, code: "payment_not_succeeded", why: "setupIntentId is not a SetupIntent id" };
  }
  let intent: Stripe.SetupIntent;
  try {
    intent = await clientFor(secretKey, settings).setupIntents.retrieve(setupIntentId);
  } catch (err) {
    const e = err as { type?: string; statusCode?: number };
    // The proof's mistake (no such SetupIntent, or one the provider refuses to read for this request):
    // the payment did not succeed, and retrying cannot change that. Everything else (network,
    // timeout, provider 5xx, a key the provider refuses) is the provider being unavailable.
    if (e.type === "StripeInvalidRequestError" && e.statusCode === 404) {
      return { ok: false, code: "payment_not_succeeded", why: "no such SetupIntent" };
    }
    if (e.type === "StripeInvalidRequestError" && e.statusCode === 400) {
      return { ok: false, code: "payment_not_succeeded", why: "the provider refused the request for it" };
    }
    return { ok: false, code: "payment_verification_unavailable", why: e.type ?? "provider error" };
  }
  const liveKey = secretKey.startsWith("sk_live_");
  if (intent.status !== "succeeded")
    return { ok: false, code: "payment_not_succeeded", why: `status ${intent.status}` };
  if (intent.metadata?.[CHALLENGE_METADATA_KEY] !== challenge.id) {
    return { ok: false, code: "payment_not_succeeded", why: "metadata does not name this challenge" };
  }
  if (intent.livemode !== liveKey)
    return { ok: false, code: "payment_not_succeeded", why: "livemode differs from the key" };
  // Stripe's created is in whole seconds.
  if (intent.created < Math.floor(challenge.issuedAt / 1000)) {
    return { ok: false, code: "payment_not_succeeded", why: "created before the challenge was issued" };
  }
  return { ok: true };
}
