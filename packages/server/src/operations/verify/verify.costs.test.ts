import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../../testing/harness.js";
import { solvePow } from "../challenge/methods/proofOfWork/proofOfWork.js";

/**
 * The costs an event records are the weights its verdict stood under (docs/api.md, tenant policy
 * `decisionCosts`): each weight the request's context.decisionCosts leaves out or sends invalid is
 * the action's, then the tenant's, then the built-in 1, 1, 3. The console's what-if replays events
 * with these costs, so every kind of verdict must record them the same way.
 */

let t: TestApp;
let key: string;
const failing = new Set<string>();
const DENIED_NET = "198.51.100.0/24";
/** The tenant's weights for signup: falseAllow tenant-wide, falseDeny for the action. */
const TENANT_COSTS = { falseAllow: 7, falseChallenge: 1, falseDeny: 9 };
/** A request that sends falseChallenge and an invalid falseDeny, with the tenant's weights under it. */
const REQUEST_COSTS = { falseChallenge: 2, falseDeny: -1 };
const WITH_REQUEST_COSTS = { falseAllow: 7, falseChallenge: 2, falseDeny: 9 };

beforeAll(async () => {
  t = await makeTestApp({
    wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
  });
  await t.tenant("acme");
  key = (await t.key("acme", { scopes: ["verify:write", "challenge:write"] })).apiKey;
  await t.store.policies.put(
    "acme",
    JSON.stringify({
      decisionCosts: { falseAllow: 7 },
      actions: { signup: { decisionCosts: { falseDeny: 9 } } },
      deny: { networks: [DENIED_NET] },
    }),
    Date.now(),
  );
});
afterAll(() => t.close());

type Json = Record<string, unknown>;
const post = async (url: string, payload: Json) => {
  const res = await t.app.inject({ method: "POST", url, headers: bearer(key), payload });
  expect(res.statusCode).toBe(200);
  return res.json() as Json;
};

const recordedCosts = async (verdict: Json) =>
  (await t.store.events.get("acme", verdict.eventId as string))?.costs;

/** A thin attempt: no finding raises the risk, so even the tenant's high falseAllow only challenges it. */
const thin = (session: string, context: Json = {}) => ({ action: "signup", session, subject: {}, context });

/** A verify answered while the store's counters are down: the degraded challenge, its event written after. */
async function degraded(payload: Json): Promise<Json> {
  failing.add("counters.hit");
  const v = await post("/v1/verify", payload);
  failing.clear();
  expect(v).toMatchObject({ decision: "challenge", degraded: true });
  await t.deps.pendingEvents.flush();
  return v;
}

/** Issues a challenge on the verdict's event, solves and completes it; resolves its id. */
async function solved(verdict: Json, session: string): Promise<string> {
  const issued = await post("/v1/challenge", { eventId: verdict.eventId, session });
  const { seed, difficulty } = issued.instructions as { seed: string; difficulty: number };
  const { nonce } = solvePow(seed, difficulty);
  expect(
    await post("/v1/challenge", { challengeId: issued.challengeId, session, proof: { nonce } }),
  ).toMatchObject({ ok: true });
  return issued.challengeId as string;
}

describe("every verdict records the request's costs over the tenant's over 1, 1, 3", () => {
  it("a scored verdict and a deny-list verdict", async () => {
    const scored = await post("/v1/verify", thin("s-scored"));
    expect(scored.decision).toBe("challenge");
    expect(await recordedCosts(scored)).toEqual(TENANT_COSTS);
    const listed = await post("/v1/verify", {
      action: "signup",
      subject: { ipTrunc: DENIED_NET },
      context: { decisionCosts: REQUEST_COSTS },
    });
    expect(listed.decision).toBe("deny");
    expect(await recordedCosts(listed)).toEqual(WITH_REQUEST_COSTS);
  });

  it("a cleared verdict: a solved challenge's re-verify, scoring skipped", async () => {
    for (const [session, context, costs] of [
      ["s-cleared", {}, TENANT_COSTS],
      ["s-cleared-costs", { decisionCosts: REQUEST_COSTS }, WITH_REQUEST_COSTS],
    ] as const) {
      const challenged = await post("/v1/verify", thin(session));
      const challengeId = await solved(challenged, session);
      const cleared = await post("/v1/verify", thin(session, { ...context, challengeId }));
      expect(cleared).toMatchObject({ decision: "allow", challengeCleared: true, degraded: false });
      expect(await recordedCosts(cleared)).toEqual(costs);
    }
  });

  it("a degraded verdict, and the scored re-verify its solved challenge clears", async () => {
    const first = await degraded(thin("s-degraded"));
    expect(await recordedCosts(first)).toEqual(TENANT_COSTS);
    const withCosts = await degraded(thin("s-degraded-costs", { decisionCosts: REQUEST_COSTS }));
    expect(await recordedCosts(withCosts)).toEqual(WITH_REQUEST_COSTS);
    const challengeId = await solved(first, "s-degraded");
    const reverified = await post("/v1/verify", thin("s-degraded", { challengeId }));
    expect(reverified).toMatchObject({ decision: "allow", challengeCleared: true, degraded: false });
    expect(await recordedCosts(reverified)).toEqual(TENANT_COSTS);
  });
});
