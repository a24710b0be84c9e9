import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostingNetworks } from "../../deps.js";
import { StoreUnavailableError } from "../../store/interfaces.js";
import {
  bearer,
  CHROME_HEADERS,
  CHROME_UA,
  expectError,
  faultyStore,
  makeTestApp,
  type TestApp,
} from "../../testing/harness.js";
import { emailHash } from "../verify/signals/email.js";
import { solvePow } from "./methods/proofOfWork/proofOfWork.js";

/**
 * A challenge belongs to its event's attempt, and its clear is honoured only for that attempt
 * (docs/security-model.md). The sequences are the ones that escaped a deny before.
 */

let t: TestApp;
let key: string;
const failing = new Set<string>();
const DENIED_NET = "198.51.100.0/24";
const BAD_EMAIL_HASH = emailHash("blocked@example.org");
const FIREFOX_UA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

beforeAll(async () => {
  t = await makeTestApp({
    hosting: hostingNetworks(),
    wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
  });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
  await t.store.policies.put(
    "acme",
    JSON.stringify({ deny: { networks: [DENIED_NET], emailHashes: [BAD_EMAIL_HASH] } }),
    Date.now(),
  );
});
afterAll(() => t.close());

type Json = Record<string, unknown>;
const post = async (url: string, payload: Json) => {
  const res = await t.app.inject({ method: "POST", url, headers: bearer(key), payload });
  return { status: res.statusCode, body: res.json() as Json };
};
const verify = async (payload: Json) => {
  const res = await post("/v1/verify", payload);
  expect(res.status).toBe(200);
  return res.body;
};

/** A verify answered while the store is down: the degraded challenge, its event written on recovery. */
async function degradedVerify(payload: Json): Promise<Json> {
  failing.add("counters.hit");
  const v = await verify(payload);
  failing.clear();
  expect(v).toMatchObject({ decision: "challenge", degraded: true });
  await t.deps.pendingEvents.flush();
  return v;
}

/**
 * Issues a challenge on the event for `session`, solves it and completes it; resolves its id. A
 * challenge above difficulty 4 (a degraded one: elevated or severe) would take seconds to tens of
 * seconds to solve: the store's clear, the once-only update a valid proof makes, stands in for it.
 */
async function clearFor(eventId: unknown, session: string): Promise<string> {
  const issued = await post("/v1/challenge", { eventId, session });
  expect(issued.status).toBe(200);
  const instructions = issued.body.instructions as { seed: string; difficulty: number };
  if (instructions.difficulty > 4) {
    const id = issued.body.challengeId as string;
    expect((await t.store.challenges.clear("acme", id, session, Date.now())).kind).toBe("cleared");
    return id;
  }
  const { nonce } = solvePow(instructions.seed, instructions.difficulty);
  const done = await post("/v1/challenge", {
    challengeId: issued.body.challengeId,
    session,
    proof: { nonce },
  });
  expect(done.body).toMatchObject({ ok: true });
  return issued.body.challengeId as string;
}

const firstReason = (v: Json): string => (v.reasons as string[])[0] as string;

describe("a degraded verdict's clear stands in for the checks that never ran", () => {
  const denied = {
    action: "signup",
    session: "deg-1",
    subject: { ipTrunc: DENIED_NET, userAgent: CHROME_UA },
  };

  it("a deny-listed network is denied fresh, degraded under an outage, and still denied after the clear, which the deny spends", async () => {
    expect((await verify({ ...denied, session: "fresh" })).decision).toBe("deny");
    const v = await degradedVerify(denied);
    const challengeId = await clearFor(v.eventId, "deg-1");
    const re = await verify({ ...denied, context: { challengeId } });
    expect(re.decision).toBe("deny");
    expect(re).not.toHaveProperty("challengeCleared");
    expect(firstReason(re)).toMatch(
      /after a degraded verdict let this attempt be scored, and it scores deny/,
    );
    // The deny is the attempt's answer: the attempt joins the degraded verdict and its deny, and ends denied.
    const attempt = await t.app.inject({
      method: "GET",
      url: `/v1/attempts/${re.eventId}`,
      headers: bearer(key),
    });
    expect(attempt.json()).toMatchObject({
      firstEventId: v.eventId,
      reverifyEventId: re.eventId,
      ending: "denied",
    });
    // The clear went with it: a second re-verify with it is scored as an attempt of its own.
    const again = await verify({ ...denied, context: { challengeId } });
    expect(again.decision).toBe("deny");
    expect(firstReason(again)).toMatch(/another verify used or is using a clear of this attempt/);
  });

  it("an attempt that scores challenge is allowed with the clear, and the reason says it was scored", async () => {
    const attempt = { action: "signup", session: "deg-2", subject: { userAgent: "curl/8.5.0" } };
    expect((await verify({ ...attempt, session: "fresh-2" })).decision).toBe("challenge");
    const v = await degradedVerify(attempt);
    const challengeId = await clearFor(v.eventId, "deg-2");
    const re = await verify({ ...attempt, context: { challengeId } });
    expect(re).toMatchObject({ decision: "allow", challengeCleared: true, degraded: false });
    expect(firstReason(re)).toMatch(/after a degraded verdict.*scored \(challenge without the clear\)/);
    expect((await verify({ ...attempt, context: { challengeId } })).decision).toBe("challenge");
  });
});

describe("a challenge is issued only on its event's own challenged attempt", () => {
  it("another session cannot take a challenge on the event: 403 challenge_session_mismatch", async () => {
    const v = await verify({ action: "signup", session: "orig", subject: { userAgent: "curl/8.5.0" } });
    expect(v.decision).toBe("challenge");
    for (const session of ["attacker-1", "attacker-2"]) {
      const res = await post("/v1/challenge", { eventId: v.eventId, session });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("challenge_session_mismatch");
    }
    expect((await post("/v1/challenge", { eventId: v.eventId, session: "orig" })).status).toBe(200);
  });

  it("an allowed event is 403 event_not_challenged; an event without a session is 400 event_without_session", async () => {
    const allowed = await verify({
      action: "signup",
      session: "ok-1",
      subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "192.0.2.0/24" },
    });
    expect(allowed.decision).toBe("allow");
    const notChallenged = await t.app.inject({
      method: "POST",
      url: "/v1/challenge",
      headers: bearer(key),
      payload: { eventId: allowed.eventId, session: "ok-1" },
    });
    expectError(notChallenged, 403, "event_not_challenged");
    const sessionless = await verify({ action: "signup", subject: { userAgent: "curl/8.5.0" } });
    expect(sessionless.decision).toBe("challenge");
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/challenge",
      headers: bearer(key),
      payload: { eventId: sessionless.eventId, session: "any" },
    });
    expectError(res, 400, "event_without_session");
  });

  it("a cleared re-verify's own event cannot be challenged again", async () => {
    const attempt = { action: "signup", session: "loop", subject: { ipTrunc: "192.0.2.0/24" } };
    const v = await verify(attempt);
    const challengeId = await clearFor(v.eventId, "loop");
    const re = await verify({ ...attempt, context: { challengeId } });
    expect(re.challengeCleared).toBe(true);
    expect((await post("/v1/challenge", { eventId: re.eventId, session: "loop" })).body.code).toBe(
      "event_not_challenged",
    );
  });
});

describe("a clear is honoured only on a re-verify of the same attempt", () => {
  /**
   * A browser's user agent, challenged without automation evidence (so its proof of work is the default
   * tier's, not the severe one an automation user agent is sealed at): a hosting network, and headers
   * without the Accept-Language every browser sends. Headers are not part of the attempt; they stay.
   */
  const innocent = {
    action: "signup",
    session: "swap",
    subject: {
      userAgent: CHROME_UA,
      headers: { accept: "text/html" },
      ipTrunc: "5.9.0.0/24",
      emailSha256: emailHash("ann@example.org"),
    },
  };

  it("swapping in a deny-listed email hash, another network, another user agent or another action is scored, and the clear survives", async () => {
    const v = await verify(innocent);
    expect(v).toMatchObject({ decision: "challenge", actorType: "unknown" });
    const challengeId = await clearFor(v.eventId, "swap");
    const { emailSha256: _, ...withoutEmail } = innocent.subject;
    const swaps: Json[] = [
      { ...innocent, subject: { ...innocent.subject, emailSha256: BAD_EMAIL_HASH } },
      { ...innocent, subject: { ...innocent.subject, ipTrunc: "3.5.140.0/24" } },
      { ...innocent, subject: { ...innocent.subject, userAgent: FIREFOX_UA } },
      { ...innocent, action: "api_key" },
      { ...innocent, subject: withoutEmail },
    ];
    for (const swap of swaps) {
      const re = await verify({ ...swap, context: { challengeId } });
      expect(re.decision, JSON.stringify(swap)).not.toBe("allow");
      expect(re).not.toHaveProperty("challengeCleared");
      expect(firstReason(re)).toMatch(/earned on another attempt: the action or the subject differs/);
    }
    const denied = await verify({ ...swaps[0], context: { challengeId } });
    expect(denied.decision).toBe("deny");
    // The genuine re-verify still redeems it: refused re-verifies never spend a clear.
    const genuine = await verify({ ...innocent, context: { challengeId } });
    expect(genuine).toMatchObject({ decision: "allow", challengeCleared: true });
  });

  it("the raw address and its SHA-256 are the same attempt; the network is compared truncated", async () => {
    await t.tenant("optin", { rawPii: true });
    const optinKey = (await t.key("optin")).apiKey;
    const call = async (url: string, payload: Json) =>
      (await t.app.inject({ method: "POST", url, headers: bearer(optinKey), payload })).json() as Json;
    // No user agent: challenged on thin evidence, at the default tier's difficulty.
    const attempt = { action: "signup", session: "raw-1", subject: {} };
    const v = await call("/v1/verify", {
      ...attempt,
      subject: { ...attempt.subject, email: " Ann@Example.org", ip: "203.0.113.9" },
    });
    const issued = await call("/v1/challenge", { eventId: v.eventId, session: "raw-1" });
    const ins = issued.instructions as { seed: string; difficulty: number };
    await call("/v1/challenge", {
      challengeId: issued.challengeId,
      session: "raw-1",
      proof: { nonce: solvePow(ins.seed, ins.difficulty).nonce },
    });
    const re = await call("/v1/verify", {
      ...attempt,
      subject: { ...attempt.subject, emailSha256: emailHash("ann@example.org"), ipTrunc: "203.0.113.0/24" },
      context: { challengeId: issued.challengeId },
    });
    expect(re).toMatchObject({ decision: "allow", challengeCleared: true });
  });

  it("a scored challenge's clear still yields to the tenant's deny list when the policy changed since", async () => {
    await t.tenant("changing");
    const k = (await t.key("changing")).apiKey;
    const call = async (url: string, payload: Json) =>
      (await t.app.inject({ method: "POST", url, headers: bearer(k), payload })).json() as Json;
    const attempt = {
      action: "signup",
      session: "pol-1",
      subject: { ipTrunc: "192.0.2.0/24" },
    };
    const v = await call("/v1/verify", attempt);
    const issued = await call("/v1/challenge", { eventId: v.eventId, session: "pol-1" });
    const ins = issued.instructions as { seed: string; difficulty: number };
    await call("/v1/challenge", {
      challengeId: issued.challengeId,
      session: "pol-1",
      proof: { nonce: solvePow(ins.seed, ins.difficulty).nonce },
    });
    await t.store.policies.put(
      "changing",
      JSON.stringify({ deny: { networks: ["192.0.2.0/24"] } }),
      Date.now(),
    );
    t.deps.tenantPolicies.forget("changing");
    const re = await call("/v1/verify", { ...attempt, context: { challengeId: issued.challengeId } });
    expect(re.decision).toBe("deny");
    expect(firstReason(re)).toMatch(/not honored \(the tenant's deny list names network 192\.0\.2\.0\/24\)/);
  });
});
