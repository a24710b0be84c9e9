import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostingNetworks } from "../../deps.js";
import type { EventRecord } from "../../domain.js";
import { BASE_POW_DIFFICULTY } from "../../policy/tenantPolicy.js";
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
import { eventTier } from "./challenge.js";
import { powDigest } from "./methods/proofOfWork/proofOfWork.js";

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
});

describe("a degraded challenge costs at least what a scored one would for the same attempt", () => {
  /** A verify of `payload` answered while the velocity counters fail: the degraded challenge. */
  async function degradedVerify(payload: Json, apiKey = key): Promise<string> {
    failing.add("counters.hit");
    const res = await post("/v1/verify", payload, apiKey);
    failing.clear();
    expect(res.json()).toMatchObject({ decision: "challenge", degraded: true, actorType: "unknown" });
    await t.deps.pendingEvents.flush();
    return (res.json() as Json).eventId as string;
  }

  /**
   * The difficulty the scored path seals for `payload` under `session`: its challenge's, or, when the
   * model allowed or denied it, the difficulty of its event's tier (what a challenge would have cost).
   */
  async function scoredDifficulty(payload: Json, session: string): Promise<number> {
    const verdict = (await post("/v1/verify", { ...payload, session })).json() as Json;
    expect(verdict.degraded).toBe(false);
    if (verdict.decision === "challenge")
      return (await sealed(verdict.eventId as string, session)).difficulty;
    const event = await t.store.events.get("acme", verdict.eventId as string);
    return BASE_POW_DIFFICULTY[eventTier(event as EventRecord)];
  }

  it("an agent_abusive attempt: severe (difficulty 6) degraded as scored, whatever the caller asks", async () => {
    const attempt = { action: "signup", subject: AUTOMATION };
    expect(await scoredDifficulty(attempt, "a-scored")).toBe(6);
    const eventId = await degradedVerify({ ...attempt, session: "a-degraded" });
    expect((await sealed(eventId, "a-degraded")).difficulty).toBe(6);
    expect((await sealed(eventId, "a-degraded", "default")).difficulty).toBe(6);
  });

  it("a person's browser is sealed severe while its counters cannot be read: its shape could be surging (a campaign's tier)", async () => {
    const browser = { userAgent: CHROME_UA, headers: CHROME_HEADERS };
    const clean = { action: "signup", subject: browser };
    expect(await scoredDifficulty(clean, "h-scored")).toBe(4);
    // A campaign's surge (signals/campaign.ts) could make the scored attempt severe.
    expect(
      (await sealed(await degradedVerify({ ...clean, session: "h-degraded" }), "h-degraded")).difficulty,
    ).toBe(6);
    // With an email address too, the worst case recorded is the attempt's own.
    const withEmail = { action: "signup", subject: { ...browser, emailSha256: emailHash("p@example.org") } };
    const eventId = await degradedVerify({ ...withEmail, session: "he-degraded" });
    expect((await sealed(eventId, "he-degraded")).difficulty).toBe(6);
    // The protected values are recorded as a scored event's are, with the worst case left open.
    const event = (await t.store.events.get("acme", eventId)) as EventRecord;
    expect(event).toMatchObject({ degraded: true, emailHash: emailHash("p@example.org"), risk: null });
    expect(event.signals.worstCase).toMatchObject({ actorType: "unknown" });
  });

  it("a degraded event recorded without its evidence (the tenant's policy never loaded in this process) is sealed severe", async () => {
    await t.tenant("cold");
    const coldKey = (await t.key("cold")).apiKey;
    failing.add("policies");
    const res = await post(
      "/v1/verify",
      { action: "signup", session: "c-1", subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS } },
      coldKey,
    );
    failing.clear();
    expect(res.json()).toMatchObject({ decision: "challenge", degraded: true });
    await t.deps.pendingEvents.flush();
    const eventId = (res.json() as Json).eventId as string;
    expect((await t.store.events.get("cold", eventId))?.signals.worstCase).toBeUndefined();
    expect((await sealed(eventId, "c-1", undefined, coldKey)).difficulty).toBe(6);
  });

  it("property: for generated attempts (human-like, unknown, agent_abusive; velocity built up as runs repeat), the degraded difficulty is never below the scored one", async () => {
    const agents = {
      browser: { userAgent: CHROME_UA, headers: CHROME_HEADERS },
      bareBrowser: { userAgent: CHROME_UA },
      curl: AUTOMATION,
      python: { userAgent: "python-requests/2.31.0" },
      none: {},
    };
    const networks = { none: {}, consumer: { ipTrunc: "192.0.2.0/24" }, hosting: HOSTING };
    const emails = {
      none: {},
      own: (run: number) => ({ emailSha256: emailHash(`u${run}@example.org`) }),
      // One address for every run: its counters pass their limit after a few runs.
      shared: () => ({ emailSha256: emailHash("shared@example.org") }),
    };
    let run = 0;
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(agents) as (keyof typeof agents)[])),
        fc.constantFrom(...(Object.keys(networks) as (keyof typeof networks)[])),
        fc.constantFrom("none", "own", "shared"),
        // Costs change the decision, never the tier: a run may be allowed, challenged or denied.
        fc.constantFrom({}, { decisionCosts: { falseAllow: 50, falseDeny: 1000 } }),
        async (agent, network, email, context) => {
          run++;
          const subject = {
            ...agents[agent],
            ...networks[network],
            ...(email === "none" ? {} : emails[email](run)),
          };
          const attempt = { action: "signup", subject, context };
          const scored = await scoredDifficulty(attempt, `p-scored-${run}`);
          const degraded = (
            await sealed(await degradedVerify({ ...attempt, session: `p-deg-${run}` }), `p-deg-${run}`)
          ).difficulty;
          seen.add(scored);
          expect(degraded, JSON.stringify({ agent, network, email, scored })).toBeGreaterThanOrEqual(scored);
        },
      ),
      { numRuns: 60 },
    );
    // Every tier was met on the scored side: the property was not vacuous.
    expect([...seen].sort()).toEqual([4, 5, 6]);
  });
});

describe("eventTier", () => {
  const risk = (estimate: number) => ({ estimate, low: estimate, high: estimate, raised: true });
  const scored = { degraded: false, signals: {} };
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
    expect(eventTier({ ...scored, actorType, risk: recorded })).toBe(tier);
  });

  const degraded = (signals: Record<string, unknown>) =>
    ({ degraded: true, actorType: "unknown", risk: null, signals }) as const;
  it.each([
    [{ worstCase: { actorType: "agent_abusive", riskEstimate: 0.2 } }, "severe"],
    [{ worstCase: { actorType: "unknown", riskEstimate: 0.75 } }, "elevated"],
    [{ worstCase: { actorType: "human", riskEstimate: 0.4 } }, "default"],
    // Recorded without a worst case, or with one that is not well formed: nothing excluded automation.
    [{}, "severe"],
    [{ worstCase: { actorType: "robot", riskEstimate: 0.1 } }, "severe"],
    [{ worstCase: { actorType: "human" } }, "severe"],
  ] as const)("a degraded event with signals %o is %s", (signals, tier) => {
    expect(eventTier(degraded(signals))).toBe(tier);
  });
});
