import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, expectError, makeTestApp, type TestApp } from "../../../../testing/harness.js";
import { CHALLENGE_METADATA_KEY } from "./stripeSetupIntents.js";

/** A local server that plays the one Stripe endpoint Warden uses, with failures and slow answers. */
function fakeStripe() {
  const intents = new Map<string, Record<string, unknown>>();
  const seen: { path: string; authorization: string | undefined }[] = [];
  let behaviour: "normal" | "error500" | "error400" | "slow" = "normal";
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? "", authorization: req.headers.authorization });
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "request-id": "req_fake" });
      res.end(JSON.stringify(body));
    };
    if (behaviour === "error500")
      return reply(500, { error: { type: "api_error", message: "Something went wrong" } });
    if (behaviour === "error400")
      return reply(400, { error: { type: "invalid_request_error", message: "Invalid request" } });
    const answer = () => {
      const id = /^\/v1\/setup_intents\/([^/?]+)/.exec(req.url ?? "")?.[1];
      const intent = id ? intents.get(id) : undefined;
      if (!intent) {
        return reply(404, {
          error: {
            type: "invalid_request_error",
            code: "resource_missing",
            message: `No such setupintent: '${id}'`,
          },
        });
      }
      return reply(200, intent);
    };
    if (behaviour === "slow") setTimeout(answer, 1500);
    else answer();
  });
  return {
    intents,
    seen,
    set: (b: typeof behaviour) => {
      behaviour = b;
    },
    start: () =>
      new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
      ),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const stripe = fakeStripe();
let t: TestApp;
let key: string;
const TEST_KEY = "sk_test_51Fake000000000000000000";

beforeAll(async () => {
  const port = await stripe.start();
  t = await makeTestApp({
    env: { WARDEN_STRIPE_API_BASE: `http://127.0.0.1:${port}`, WARDEN_STRIPE_TIMEOUT_MS: "300" },
  });
  await t.tenant("shop");
  await t.tenant("plain");
  await t.store.tenants.setPaymentKey("shop", TEST_KEY);
  key = (await t.key("shop")).apiKey;
});
afterAll(async () => {
  await t.close();
  await stripe.stop();
});

const call = (payload: Record<string, unknown>, apiKey = key) =>
  t.app.inject({ method: "POST", url: "/v1/challenge", headers: bearer(apiKey), payload });

async function paymentChallenge(session: string, apiKey = key) {
  const event = (
    await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: { action: "trial_activation", session, subject: {} },
    })
  ).json();
  const res = await call(
    { eventId: event.eventId, session, prefer: ["payment_preauth", "proof_of_work"] },
    apiKey,
  );
  expect(res.statusCode).toBe(200);
  return res.json();
}

const intent = (id: string, challengeId: string, extra: Record<string, unknown> = {}) => ({
  id,
  object: "setup_intent",
  status: "succeeded",
  livemode: false,
  created: Math.floor(Date.now() / 1000),
  metadata: { [CHALLENGE_METADATA_KEY]: challengeId },
  ...extra,
});

const complete = (challengeId: string, session: string, setupIntentId: string) =>
  call({ challengeId, session, proof: { method: "provider_setup_intent", setupIntentId } });

describe("payment_preauth", () => {
  it("is issued only to a tenant with a payment provider, with instructions naming the challenge", async () => {
    const c = await paymentChallenge("p-issue");
    expect(c.method).toBe("payment_preauth");
    expect(c.instructions).toMatchObject({
      type: "stripe_setup_intent",
      metadata: { [CHALLENGE_METADATA_KEY]: c.challengeId },
    });
    const plainKey = (await t.key("plain")).apiKey;
    expect((await paymentChallenge("p-plain", plainKey)).method).toBe("proof_of_work");
  });

  it("clears with a succeeded SetupIntent retrieved through the Stripe SDK, then re-verify is honored", async () => {
    const c = await paymentChallenge("p-ok");
    stripe.intents.set("seti_ok1", intent("seti_ok1", c.challengeId));
    const res = await complete(c.challengeId, "p-ok", "seti_ok1");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, method: "payment_preauth", boundTo: "p-ok" });
    const request = stripe.seen.find((r) => r.path.startsWith("/v1/setup_intents/seti_ok1"));
    expect(request?.authorization).toBe(`Bearer ${TEST_KEY}`);
    const v = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(key),
      payload: {
        action: "trial_activation",
        session: "p-ok",
        subject: {},
        context: { challengeId: c.challengeId },
      },
    });
    expect(v.json()).toMatchObject({ decision: "allow", challengeCleared: true });
  });

  it.each([
    ["not succeeded", { status: "requires_confirmation" }],
    ["metadata naming another challenge", { metadata: { [CHALLENGE_METADATA_KEY]: "chl_someone_else" } }],
    ["livemode differing from the key", { livemode: true }],
    ["created before the challenge was issued", { created: Math.floor(Date.now() / 1000) - 3600 }],
  ])(
    "refuses a SetupIntent %s with 400 payment_not_succeeded and leaves the challenge issued",
    async (_n, extra) => {
      const c = await paymentChallenge(`p-${_n}`);
      const id = `seti_bad${stripe.intents.size}`;
      stripe.intents.set(id, intent(id, c.challengeId, extra));
      expectError(await complete(c.challengeId, `p-${_n}`, id), 400, "payment_not_succeeded");
      stripe.intents.set(`seti_fix${id}`, intent(`seti_fix${id}`, c.challengeId));
      expect((await complete(c.challengeId, `p-${_n}`, `seti_fix${id}`)).statusCode).toBe(200);
    },
  );

  it("an unknown SetupIntent is 400 payment_not_succeeded; a malformed id never reaches the provider", async () => {
    const c = await paymentChallenge("p-missing");
    expectError(
      await complete(c.challengeId, "p-missing", "seti_doesnotexist"),
      400,
      "payment_not_succeeded",
    );
    const before = stripe.seen.length;
    expectError(
      await complete(c.challengeId, "p-missing", "pi_not_a_setup_intent"),
      400,
      "payment_not_succeeded",
    );
    expect(stripe.seen.length).toBe(before);
  });

  it("a request the provider refuses (400), or a provider removed since issue, is 400 payment_not_succeeded, not a retryable 503", async () => {
    const c = await paymentChallenge("p-refused");
    stripe.intents.set("seti_refused", intent("seti_refused", c.challengeId));
    stripe.set("error400");
    try {
      expectError(await complete(c.challengeId, "p-refused", "seti_refused"), 400, "payment_not_succeeded");
    } finally {
      stripe.set("normal");
    }
    await t.tenant("removed");
    await t.store.tenants.setPaymentKey("removed", TEST_KEY);
    const removedKey = (await t.key("removed")).apiKey;
    const r = await paymentChallenge("p-removed", removedKey);
    await t.store.tenants.setPaymentKey("removed", null);
    const res = await call(
      {
        challengeId: r.challengeId,
        session: "p-removed",
        proof: { method: "provider_setup_intent", setupIntentId: "seti_x" },
      },
      removedKey,
    );
    expectError(res, 400, "payment_not_succeeded");
  });

  it("a nonce is the wrong proof for a payment challenge", async () => {
    const c = await paymentChallenge("p-mismatch");
    expectError(
      await call({ challengeId: c.challengeId, session: "p-mismatch", proof: { nonce: "123" } }),
      400,
      "challenge_method_mismatch",
    );
  });

  it("a provider failing, too slow or unreachable is 503 payment_verification_unavailable", async () => {
    const c = await paymentChallenge("p-down");
    stripe.intents.set("seti_down", intent("seti_down", c.challengeId));
    stripe.set("error500");
    expectError(
      await complete(c.challengeId, "p-down", "seti_down"),
      503,
      "payment_verification_unavailable",
    );
    // A provider answering success after 1.5 s: 503, Warden gave up at its time limit instead.
    stripe.set("slow");
    expectError(
      await complete(c.challengeId, "p-down", "seti_down"),
      503,
      "payment_verification_unavailable",
    );
    stripe.set("normal");
    expect((await complete(c.challengeId, "p-down", "seti_down")).statusCode).toBe(200);

    await t.tenant("unreachable");
    await t.store.tenants.setPaymentKey("unreachable", TEST_KEY);
    const other = await makeTestApp({
      env: { WARDEN_STRIPE_API_BASE: "http://127.0.0.1:9", WARDEN_STRIPE_TIMEOUT_MS: "300" },
    });
    try {
      await other.tenant("shop2");
      await other.store.tenants.setPaymentKey("shop2", TEST_KEY);
      const k = (await other.key("shop2")).apiKey;
      const event = (
        await other.app.inject({
          method: "POST",
          url: "/v1/verify",
          headers: bearer(k),
          payload: { action: "x", session: "s", subject: {} },
        })
      ).json();
      const ch = (
        await other.app.inject({
          method: "POST",
          url: "/v1/challenge",
          headers: bearer(k),
          payload: { eventId: event.eventId, session: "s", prefer: ["payment_preauth"] },
        })
      ).json();
      const res = await other.app.inject({
        method: "POST",
        url: "/v1/challenge",
        headers: bearer(k),
        payload: {
          challengeId: ch.challengeId,
          session: "s",
          proof: { method: "provider_setup_intent", setupIntentId: "seti_x" },
        },
      });
      expectError(res, 503, "payment_verification_unavailable");
    } finally {
      await other.close();
    }
  });
  it("a SetupIntent that already cleared another challenge is 400 payment_not_succeeded, never a retryable 503", async () => {
    const first = await paymentChallenge("p-reuse-1");
    stripe.intents.set("seti_reused", intent("seti_reused", first.challengeId));
    expect((await complete(first.challengeId, "p-reuse-1", "seti_reused")).statusCode).toBe(200);
    const second = await paymentChallenge("p-reuse-2");
    // Even if the provider object were altered to name the second challenge, it proves one clear only.
    stripe.intents.set("seti_reused", intent("seti_reused", second.challengeId));
    const res = await complete(second.challengeId, "p-reuse-2", "seti_reused");
    expectError(res, 400, "payment_not_succeeded");
    expect(res.json().message).toMatch(/already cleared another challenge/);
    expect((await t.store.challenges.get("shop", second.challengeId))?.clearedAt).toBeNull();
  });

  it("a payment proof must name method provider_setup_intent: missing or another name is 400 challenge_method_mismatch", async () => {
    const c = await paymentChallenge("p-method");
    stripe.intents.set("seti_method", intent("seti_method", c.challengeId));
    for (const proof of [
      { setupIntentId: "seti_method" },
      { method: "payment_preauth", setupIntentId: "seti_method" },
      { method: "constructor", setupIntentId: "seti_method" },
      { method: "web_bot_auth", setupIntentId: "seti_method" },
    ]) {
      expectError(
        await call({ challengeId: c.challengeId, session: "p-method", proof }),
        400,
        "challenge_method_mismatch",
      );
    }
    expect((await complete(c.challengeId, "p-method", "seti_method")).statusCode).toBe(200);
  });
});
