import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostingNetworks } from "../../deps.js";
import type { EventRecord } from "../../domain.js";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { bearer, expectError, faultyStore, makeTestApp, type TestApp } from "../../testing/harness.js";
import { eventTier } from "./challenge.js";
import { powDigest } from "./proofOfWork.js";

/**
 * The proof-of-work tier sealed at issue is the higher of the caller's `context.riskTier` and the
 * event's own (challenge.ts, eventTier): automation evidence (agent_abusive) is severe, an abuse
 * estimate of 0.75 or more elevated. Integrations rarely pass riskTier; a higher tier never lowers cost.
 */

let t: TestApp;
let key: string;
const failing = new Set<string>();

beforeAll(async () => {
  t = await makeTestApp({
    hosting: hostingNetworks(),
    wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
  });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

/** An automation user agent: agent_abusive. */
const AUTOMATION = { userAgent: "curl/8.5.0" };
/** No user agent, nothing else: challenged on thin evidence, actorType unknown, risk about 0.51. */
const THIN = { ipTrunc: "192.0.2.0/24" };
/** No user agent, from a hosting network: actorType unknown, risk about 0.83. */
const HOSTING = { ipTrunc: "5.9.0.0/24" };

type Json = Record<string, unknown>;
const post = (url: string, payload: Json, apiKey = key) =>
  t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });

/** A challenged, scored verify of `subject` for `session`, and the event it recorded. */
async function challenged(session: string, subject: Json, caller = { apiKey: key, tenantId: "acme" }) {
  const res = await post("/v1/verify", { action: "signup", session, subject }, caller.apiKey);
  const verdict = res.json() as Json;
  expect(verdict).toMatchObject({ decision: "challenge", degraded: false });
  const event = await t.store.events.get(caller.tenantId, verdict.eventId as string);
  expect(event).toBeDefined();
  return { eventId: verdict.eventId as string, event: event as EventRecord };
}

/** Issues a challenge on `eventId` (with `riskTier` when given) and resolves its sealed difficulty. */
async function sealed(eventId: string, session: string, riskTier?: string, apiKey = key) {
  const res = await post(
    "/v1/challenge",
    { eventId, session, ...(riskTier === undefined ? {} : { context: { riskTier } }) },
    apiKey,
  );
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { challengeId: string; instructions: { difficulty: number; seed: string } };
  return { challengeId: body.challengeId, ...body.instructions };
}

/** A nonce whose digest starts with exactly `zeros` zeros (solves that difficulty, not the next). */
function nonceWithExactly(seed: string, zeros: number): string {
  for (let i = 0; ; i++) {
    const nonce = `n${i}`;
    const digest = powDigest(seed, nonce);
    if (digest.startsWith("0".repeat(zeros)) && digest[zeros] !== "0") return nonce;
  }
}

describe("the tier sealed at issue is the caller's or the event's, whichever costs more", () => {
  it("an agent_abusive event's challenge is sealed severe (difficulty 6) even when the caller asks for default", async () => {
    const { eventId, event } = await challenged("s-auto", AUTOMATION);
    expect(event.actorType).toBe("agent_abusive");
    expect((await sealed(eventId, "s-auto")).difficulty).toBe(6);
    expect((await sealed(eventId, "s-auto", "elevated")).difficulty).toBe(6);
    const asked = await sealed(eventId, "s-auto", "default");
    expect(asked.difficulty).toBe(6);
    // Completion checks the sealed value: a proof of the default tier's difficulty is refused.
    expectError(
      await post("/v1/challenge", {
        challengeId: asked.challengeId,
        session: "s-auto",
        proof: { nonce: nonceWithExactly(asked.seed, 4) },
      }),
      400,
      "invalid_challenge_proof",
    );
  });

  it("a caller's severe tier on a low-risk event is kept (a higher tier never lowers cost)", async () => {
    const { eventId, event } = await challenged("s-thin", THIN);
    expect(event.actorType).toBe("unknown");
    expect(event.risk?.estimate).toBeLessThan(0.75);
    expect((await sealed(eventId, "s-thin")).difficulty).toBe(4);
    expect((await sealed(eventId, "s-thin", "default")).difficulty).toBe(4);
    expect((await sealed(eventId, "s-thin", "elevated")).difficulty).toBe(5);
    expect((await sealed(eventId, "s-thin", "severe")).difficulty).toBe(6);
  });

  it("an event with risk ≥ 0.75 that is not automation is sealed elevated", async () => {
    const { eventId, event } = await challenged("s-hosting", HOSTING);
    expect(event.actorType).toBe("unknown");
    expect(event.risk?.estimate).toBeGreaterThanOrEqual(0.75);
    expect((await sealed(eventId, "s-hosting")).difficulty).toBe(5);
    expect((await sealed(eventId, "s-hosting", "default")).difficulty).toBe(5);
    // The caller's higher tier is kept here too.
    expect((await sealed(eventId, "s-hosting", "severe")).difficulty).toBe(6);
  });

  it("a tenant's powDifficulty for severe is what an agent_abusive event gets", async () => {
    await t.tenant("raised");
    const raisedKey = (await t.key("raised")).apiKey;
    const raised = { apiKey: raisedKey, tenantId: "raised" };
    await t.store.policies.put(
      "raised",
      JSON.stringify({ challenge: { powDifficulty: { default: 5, elevated: 6, severe: 7 } } }),
      Date.now(),
    );
    const auto = await challenged("r-auto", AUTOMATION, raised);
    expect(auto.event.actorType).toBe("agent_abusive");
    expect((await sealed(auto.eventId, "r-auto", undefined, raisedKey)).difficulty).toBe(7);
    expect((await sealed(auto.eventId, "r-auto", "default", raisedKey)).difficulty).toBe(7);
    // The other tiers are the tenant's too: each event gets its own tier's value.
    const hosting = await challenged("r-hosting", HOSTING, raised);
    expect((await sealed(hosting.eventId, "r-hosting", undefined, raisedKey)).difficulty).toBe(6);
    const thin = await challenged("r-thin", THIN, raised);
    expect((await sealed(thin.eventId, "r-thin", undefined, raisedKey)).difficulty).toBe(5);
  });

  it("a degraded event was never scored: its challenge is sealed at the caller's tier", async () => {
    failing.add("counters.hit");
    const res = await post("/v1/verify", { action: "signup", session: "s-degraded", subject: AUTOMATION });
    failing.clear();
    const verdict = res.json() as Json;
    expect(verdict).toMatchObject({ decision: "challenge", degraded: true, actorType: "unknown" });
    await t.deps.pendingEvents.flush();
    const eventId = verdict.eventId as string;
    expect((await sealed(eventId, "s-degraded")).difficulty).toBe(4);
    expect((await sealed(eventId, "s-degraded", "severe")).difficulty).toBe(6);
  });
});

describe("eventTier", () => {
  const risk = (estimate: number) => ({ estimate, low: estimate, high: estimate, raised: true });
  it.each([
    ["agent_abusive", risk(0.1), "severe"],
    ["agent_abusive", risk(0.9), "severe"],
    ["agent_abusive", null, "severe"],
    ["unknown", risk(0.75), "elevated"],
    ["unknown", risk(0.99), "elevated"],
    ["unknown", risk(0.7499), "default"],
    ["unknown", null, "default"],
    ["human", risk(0.03), "default"],
  ] as const)("%s with risk %o is %s", (actorType, recorded, tier) => {
    expect(eventTier({ actorType, risk: recorded })).toBe(tier);
  });
});
