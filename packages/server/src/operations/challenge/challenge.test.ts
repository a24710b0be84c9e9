import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../store/interfaces.js";
import {
  bearer,
  CHROME_UA,
  expectError,
  faultyStore,
  makeTestApp,
  type TestApp,
} from "../../testing/harness.js";
import { CLEARED_REASON } from "../verify/verify.js";
import { powDigest, solvePow } from "./methods/proofOfWork/proofOfWork.js";

let t: TestApp;
let key: string;
let now = Date.parse("2026-11-22T10:00:00Z");
const failing = new Set<string>();

beforeAll(async () => {
  t = await makeTestApp({
    clock: () => now,
    wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
  });
  await t.tenant("acme", { rawPii: true });
  await t.tenant("other");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

async function verify(payload: Record<string, unknown>, apiKey = key) {
  const res = await t.app.inject({ method: "POST", url: "/v1/verify", headers: bearer(apiKey), payload });
  return res.json() as Record<string, unknown>;
}

const challengeCall = (payload: Record<string, unknown>, apiKey = key) =>
  t.app.inject({ method: "POST", url: "/v1/challenge", headers: bearer(apiKey), payload });

/**
 * The attempt these tests challenge: no user agent, nothing else (thin evidence, actorType unknown, risk
 * under 0.75), so the tier sealed at issue is the caller's: an automation user agent would be sealed
 * severe (difficulty 6, tens of seconds for solvePow). sealedTier.test.ts covers the event's own tier.
 */
const THIN = {};

async function issued(session: string, extra: Record<string, unknown> = {}) {
  const event = await verify({ action: "signup", session, subject: THIN });
  expect(event).toMatchObject({ decision: "challenge", actorType: "unknown", degraded: false });
  const res = await challengeCall({ eventId: event.eventId, session, ...extra });
  expect(res.statusCode).toBe(200);
  return { eventId: event.eventId as string, challenge: res.json() };
}

/** A nonce whose digest starts with exactly `zeros` zeros (solves that difficulty, not the next). */
function nonceWithExactly(seed: string, zeros: number): string {
  for (let i = 0; ; i++) {
    const nonce = `n${i}`;
    const digest = powDigest(seed, nonce);
    if (digest.startsWith("0".repeat(zeros)) && digest[zeros] !== "0") return nonce;
  }
}

describe("issue mode", () => {
  it("issues proof_of_work bound to the session with sealed instructions and a 5-minute lifetime", async () => {
    const { challenge } = await issued("s-issue");
    expect(challenge).toEqual({
      challengeId: expect.stringMatching(/^chl_[A-Za-z0-9_-]{30}$/),
      method: "proof_of_work",
      instructions: {
        type: "pow",
        difficulty: 4,
        seed: expect.stringMatching(/^[0-9a-f]{32}$/),
        algorithm: "sha256-prefix",
      },
      boundTo: "s-issue",
      expiresAt: new Date(now + 300_000).toISOString(),
    });
  });

  it.each([
    ["elevated", 5],
    ["severe", 6],
    ["default", 4],
  ])("riskTier %s gives difficulty %i", async (riskTier, difficulty) => {
    const { challenge } = await issued(`s-tier-${riskTier}`, { context: { riskTier } });
    expect(challenge.instructions.difficulty).toBe(difficulty);
  });

  it("skips unsupported and unconfigured preferences, never selects email_otp, and floors at proof_of_work", async () => {
    const { challenge } = await issued("s-prefer", {
      prefer: ["email_otp", "payment_preauth", "device_attestation", "carrier_pigeon"],
    });
    expect(challenge.method).toBe("proof_of_work");
  });

  it("never clears anything by issuing: a re-verify right after issue is not honored", async () => {
    const { challenge } = await issued("s-noclear");
    const v = await verify({
      action: "signup",
      session: "s-noclear",
      subject: THIN,
      context: { challengeId: challenge.challengeId },
    });
    expect(v).not.toHaveProperty("challengeCleared");
    expect((v.reasons as string[])[0]).toMatch(/not honored \(it has not been solved\)/);
  });

  it("refuses bad requests with the documented codes", async () => {
    const event = await verify({ action: "signup", subject: {} });
    expectError(await challengeCall({ eventId: event.eventId }), 400, "session_required");
    expectError(await challengeCall({ eventId: event.eventId, session: "" }), 400, "session_required");
    expectError(
      await challengeCall({ eventId: event.eventId, session: "s".repeat(129) }),
      400,
      "session_too_long",
    );
    expectError(
      await challengeCall({ eventId: event.eventId, session: "s", context: { riskTier: "extreme" } }),
      400,
      "invalid_risk_tier",
    );
    expectError(await challengeCall({ session: "s" }), 400, "missing_required_field");
    expectError(await challengeCall({ eventId: "evt_unknown", session: "s" }), 404, "unknown_event_id");
    const otherKey = (await t.key("other")).apiKey;
    expectError(
      await challengeCall({ eventId: event.eventId, session: "s" }, otherKey),
      404,
      "unknown_event_id",
    );
    const noScope = (await t.key("acme", { scopes: ["verify:write"] })).apiKey;
    expectError(
      await challengeCall({ eventId: event.eventId, session: "s" }, noScope),
      403,
      "insufficient_scope",
    );
  });

  it("refuses to issue against a denied event: a deny cannot be escaped through friction", async () => {
    const denied = await verify({
      action: "signup",
      session: "s-deny",
      subject: { userAgent: "curl/8.5.0", email: "x@mailinator.com" },
    });
    expect(denied.decision).toBe("deny");
    expectError(await challengeCall({ eventId: denied.eventId, session: "s-deny" }), 403, "event_denied");
  });
});

describe("completion mode", () => {
  it("clears the bound session once with a valid nonce", async () => {
    const { challenge } = await issued("s-ok");
    const { nonce } = solvePow(challenge.instructions.seed, challenge.instructions.difficulty);
    const res = await challengeCall({
      challengeId: challenge.challengeId,
      session: "s-ok",
      proof: { nonce },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...challenge, ok: true, clearedAt: new Date(now).toISOString() });
    expectError(
      await challengeCall({ challengeId: challenge.challengeId, session: "s-ok", proof: { nonce } }),
      409,
      "challenge_already_solved",
    );
  });

  it("an invalid proof is 400 and leaves the challenge issued", async () => {
    const { challenge } = await issued("s-bad");
    const { seed, difficulty } = challenge.instructions;
    expectError(
      await challengeCall({ challengeId: challenge.challengeId, session: "s-bad", proof: { nonce: "nope" } }),
      400,
      "invalid_challenge_proof",
    );
    expectError(
      await challengeCall({
        challengeId: challenge.challengeId,
        session: "s-bad",
        proof: { nonce: "x".repeat(65) },
      }),
      400,
      "invalid_challenge_proof",
    );
    expectError(
      await challengeCall({ challengeId: challenge.challengeId, session: "s-bad", proof: {} }),
      400,
      "challenge_method_mismatch",
    );
    const ok = await challengeCall({
      challengeId: challenge.challengeId,
      session: "s-bad",
      proof: { nonce: solvePow(seed, difficulty).nonce },
    });
    expect(ok.statusCode).toBe(200);
  });

  it("checks the difficulty sealed at issue", async () => {
    const { challenge } = await issued("s-sealed", { context: { riskTier: "elevated" } });
    const weak = nonceWithExactly(challenge.instructions.seed, 4);
    expectError(
      await challengeCall({
        challengeId: challenge.challengeId,
        session: "s-sealed",
        proof: { nonce: weak },
      }),
      400,
      "invalid_challenge_proof",
    );
  });

  it("answers the documented codes, in the documented order when several apply", async () => {
    const { challenge } = await issued("s-order");
    const { nonce } = solvePow(challenge.instructions.seed, challenge.instructions.difficulty);
    const id = challenge.challengeId;
    expectError(
      await challengeCall({ challengeId: "chl_nope", session: "s-order", proof: { nonce } }),
      404,
      "unknown_challenge",
    );
    expectError(
      await challengeCall(
        { challengeId: id, session: "s-order", proof: { nonce } },
        (await t.key("other")).apiKey,
      ),
      404,
      "unknown_challenge",
    );
    expectError(
      await challengeCall({ challengeId: id, session: "someone-else", proof: { nonce } }),
      403,
      "challenge_session_mismatch",
    );
    expectError(
      await challengeCall({
        challengeId: id,
        session: "s-order",
        proof: { method: "provider_setup_intent", setupIntentId: "seti_1" },
      }),
      400,
      "challenge_method_mismatch",
    );
    expectError(await challengeCall({ challengeId: id, session: "s-order" }), 400, "missing_required_field");
    now += 300_001;
    // Expired, and the wrong session: the session answers first.
    expectError(
      await challengeCall({ challengeId: id, session: "someone-else", proof: { nonce } }),
      403,
      "challenge_session_mismatch",
    );
    expectError(
      await challengeCall({ challengeId: id, session: "s-order", proof: { nonce } }),
      410,
      "challenge_expired",
    );
  });

  it("of concurrent valid completions exactly one clears; the rest get 409", async () => {
    const { challenge } = await issued("s-race");
    const { nonce } = solvePow(challenge.instructions.seed, challenge.instructions.difficulty);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        challengeCall({ challengeId: challenge.challengeId, session: "s-race", proof: { nonce } }),
      ),
    );
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200))
      expectError(a, 409, "challenge_already_solved");
  });

  it("a completion retried with its Idempotency-Key replays its answer; anything else on a cleared challenge is 409", async () => {
    const { challenge } = await issued("s-retry");
    const { nonce } = solvePow(challenge.instructions.seed, challenge.instructions.difficulty);
    const body = { challengeId: challenge.challengeId, session: "s-retry", proof: { nonce } };
    const send = (payload: Record<string, unknown>, idem?: string) =>
      t.app.inject({
        method: "POST",
        url: "/v1/challenge",
        headers: { ...bearer(key), ...(idem === undefined ? {} : { "idempotency-key": idem }) },
        payload,
      });
    const first = await send(body, "complete-1");
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ ok: true });
    now += 2_000;
    // The answer was lost: the retry gets it again, with the first clear's time.
    const retried = await send(body, "complete-1");
    expect(retried.statusCode).toBe(200);
    expect(retried.headers["idempotent-replayed"]).toBe("true");
    expect(retried.json()).toEqual(first.json());
    // The body form of the key is the same key.
    expect((await send({ ...body, idempotencyKey: "complete-1" })).json()).toEqual(first.json());
    // Without the key, or with another key: 409 challenge_already_solved.
    expectError(await send(body), 409, "challenge_already_solved");
    expectError(await send(body, "complete-2"), 409, "challenge_already_solved");
    // The same key with another payload.
    expectError(
      await send({ ...body, proof: { nonce: `${nonce}x` } }, "complete-1"),
      409,
      "idempotency_conflict",
    );
    // Another session never learns the state, key or not.
    expectError(await send({ ...body, session: "s-other" }, "complete-1"), 403, "challenge_session_mismatch");
  });

  it("of concurrent completions with one Idempotency-Key, one clears and every other gets the same answer", async () => {
    const { challenge } = await issued("s-retry-race");
    const { nonce } = solvePow(challenge.instructions.seed, challenge.instructions.difficulty);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        t.app.inject({
          method: "POST",
          url: "/v1/challenge",
          headers: { ...bearer(key), "idempotency-key": "race-key" },
          payload: { challengeId: challenge.challengeId, session: "s-retry-race", proof: { nonce } },
        }),
      ),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(12).fill(200));
    expect(new Set(answers.map((a) => a.json().clearedAt)).size).toBe(1);
  });

  it("store faults answer 503 challenge_issue_failed or challenge_unavailable", async () => {
    const event = await verify({ action: "signup", session: "s-fault", subject: {} });
    failing.add("challenges.insert");
    expectError(
      await challengeCall({ eventId: event.eventId, session: "s-fault" }),
      503,
      "challenge_issue_failed",
    );
    failing.clear();
    const { challenge } = await issued("s-fault2");
    failing.add("challenges.get");
    expectError(
      await challengeCall({ challengeId: challenge.challengeId, session: "s-fault2", proof: { nonce: "1" } }),
      503,
      "challenge_unavailable",
    );
    failing.clear();
  });
});

describe("re-verify with context.challengeId", () => {
  async function solved(session: string) {
    const { challenge } = await issued(session);
    const { nonce } = solvePow(challenge.instructions.seed, challenge.instructions.difficulty);
    expect(
      (await challengeCall({ challengeId: challenge.challengeId, session, proof: { nonce } })).statusCode,
    ).toBe(200);
    return challenge.challengeId as string;
  }
  const reverify = (session: string | undefined, challengeId: string) =>
    verify({
      action: "signup",
      ...(session ? { session } : {}),
      subject: THIN,
      context: { challengeId },
    });

  it("is honored once: allow, degraded false, challengeCleared true, scoring skipped, and a token that says so", async () => {
    const id = await solved("s-re");
    const v = await reverify("s-re", id);
    expect(v).toMatchObject({
      decision: "allow",
      degraded: false,
      challengeCleared: true,
      // Decided by the honoured clear, scoring skipped: confidence 1; a solved challenge proves work, not a person.
      actorType: "unknown",
      confidence: 1,
      reasons: [CLEARED_REASON],
    });
    const url = await t.app.listen({ port: 0, host: "127.0.0.1" });
    // The token was issued on this test's clock, not the wall clock.
    const { payload } = await jwtVerify(
      v.verdictToken as string,
      createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)),
      { currentDate: new Date(now) },
    );
    expect(payload).toMatchObject({ decision: "allow", challengeCleared: true, sub: "s-re", tid: "acme" });
    const event = await t.store.events.get("acme", v.eventId as string);
    expect(event).toMatchObject({ decision: "allow", signals: { challengeId: id } });

    const again = await reverify("s-re", id);
    expect(again.decision).toBe("challenge");
    expect(again).not.toHaveProperty("challengeCleared");
    expect((again.reasons as string[])[0]).toMatch(/another verify used or is using a clear of this attempt/);
  });

  it("is not honored for another session, without a session, after the window, or for an unknown id", async () => {
    const id = await solved("s-scope");
    expect(((await reverify("s-other", id)).reasons as string[])[0]).toMatch(/bound to another session/);
    expect(((await reverify(undefined, id)).reasons as string[])[0]).toMatch(/carries no session/);
    expect(((await reverify("s-scope", "chl_unknown")).reasons as string[])[0]).toMatch(/no such challenge/);
    now += 600_001;
    const late = await reverify("s-scope", id);
    expect(late).not.toHaveProperty("challengeCleared");
    expect((late.reasons as string[])[0]).toMatch(/cleared more than 10 minutes ago/);
  });

  it("of concurrent re-verifies exactly one redeems the clear", async () => {
    const id = await solved("s-many");
    const answers = await Promise.all(Array.from({ length: 10 }, () => reverify("s-many", id)));
    expect(answers.filter((a) => a.challengeCleared === true)).toHaveLength(1);
    for (const a of answers) if (a.challengeCleared !== true) expect(a.decision).not.toBe("allow");
  });

  it("a clear is not a standing allow: the same session without the challengeId is scored on its evidence", async () => {
    await solved("s-mine");
    const next = await verify({ action: "signup", session: "s-mine", subject: THIN });
    expect(next).toMatchObject({ decision: "challenge", actorType: "unknown", degraded: false });
    expect(next).not.toHaveProperty("challengeCleared");
    // …and a browser on another session is decided on its own evidence too.
    const other = await verify({ action: "signup", session: "s-theirs", subject: { userAgent: CHROME_UA } });
    expect(other).not.toHaveProperty("challengeCleared");
  });

  it("a store fault while redeeming degrades the verdict, and the degraded answer does not spend the clear", async () => {
    const id = await solved("s-degrade");
    failing.add("events.record");
    const v = await reverify("s-degrade", id);
    failing.clear();
    expect(v).toMatchObject({ decision: "challenge", degraded: true });
    expect(v).not.toHaveProperty("challengeCleared");
    const retried = await reverify("s-degrade", id);
    expect(retried).toMatchObject({ decision: "allow", degraded: false, challengeCleared: true });
  });
});
