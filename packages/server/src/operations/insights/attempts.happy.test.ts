import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, expectError, makeTestApp, type TestApp } from "../../testing/harness.js";
import { solvePow } from "../challenge/methods/proofOfWork/proofOfWork.js";

let t: TestApp;
let key: string;
let otherKey: string;
const now = Date.parse("2026-11-27T10:00:00Z");

beforeAll(async () => {
  t = await makeTestApp({ clock: () => now });
  await t.tenant("acme");
  await t.tenant("other");
  key = (await t.key("acme")).apiKey;
  otherKey = (await t.key("other")).apiKey;
});
afterAll(() => t.close());

const post = (url: string, payload: Record<string, unknown>, apiKey = key) =>
  t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });
const get = (url: string, apiKey = key) => t.app.inject({ method: "GET", url, headers: bearer(apiKey) });
const period = `since=${encodeURIComponent(new Date(now - 3_600_000).toISOString())}&until=${encodeURIComponent(new Date(now + 60_000).toISOString())}`;

/** A thin attempt (no user agent): challenged, its proof of work solved, then re-verified. */
async function challengedThenCleared(session: string) {
  const first = (await post("/v1/verify", { action: "signup", session, subject: {} })).json();
  expect(first.decision).toBe("challenge");
  const challenge = (await post("/v1/challenge", { eventId: first.eventId, session })).json();
  const { nonce } = solvePow(challenge.instructions.seed, challenge.instructions.difficulty);
  const solved = await post("/v1/challenge", {
    challengeId: challenge.challengeId,
    session,
    proof: { nonce },
  });
  expect(solved.statusCode).toBe(200);
  const again = (
    await post("/v1/verify", {
      action: "signup",
      session,
      subject: {},
      context: { challengeId: challenge.challengeId },
    })
  ).json();
  expect(again).toMatchObject({ decision: "allow", challengeCleared: true });
  return { first: first.eventId as string, reverify: again.eventId as string };
}

describe("attempts", () => {
  it("a challenged then cleared attempt is one attempt, from either of its events", async () => {
    const { first, reverify } = await challengedThenCleared("s-one");
    for (const id of [first, reverify]) {
      const res = await get(`/v1/attempts/${id}`);
      expect(res.statusCode).toBe(200);
      const view = res.json();
      expect(view).toMatchObject({ firstEventId: first, reverifyEventId: reverify, ending: "cleared" });
      expect(view.first.event).toMatchObject({ eventId: first, decision: "challenge" });
      expect(view.first.challenges[0].redeemedAt).not.toBeNull();
      expect(view.reverify.event).toMatchObject({ eventId: reverify, decision: "allow", decidedBy: "clear" });
    }
  });

  it("counts attempts by how they ended, never the re-verify as an allow of its own", async () => {
    const abandoned = (await post("/v1/verify", { action: "signup", session: "s-gone", subject: {} })).json();
    await post("/v1/challenge", { eventId: abandoned.eventId, session: "s-gone" });
    const res = await get(`/v1/stats/attempts?${period}&bucket=hour`);
    expect(res.statusCode).toBe(200);
    const rows = res.json().rows as { ending: string; count: number }[];
    const by = Object.fromEntries(rows.map((r) => [r.ending, r.count]));
    expect(by).toEqual({ cleared: 1, challenged: 1 });
    const csv = await get(`/v1/stats/attempts?${period}&format=csv`);
    expect(csv.body.split(/\r?\n/)[0]).toBe("bucketStart,action,ending,degraded,count");
  });

  it("feedback on the re-verify labels the challenged attempt in calibration and outcomes", async () => {
    const { reverify } = await challengedThenCleared("s-abuser");
    const before = (await get(`/v1/stats/calibration?${period}`)).json();
    const fb = await post("/v1/feedback", {
      eventId: reverify,
      outcome: "abuse_confirmed",
      observedAt: new Date(now).toISOString(),
    });
    expect(fb.statusCode).toBe(200);
    // The cached risk groups are read afresh by a period the cache has not seen.
    const fresh = `since=${encodeURIComponent(new Date(now - 3_600_001).toISOString())}&until=${encodeURIComponent(new Date(now + 60_000).toISOString())}`;
    const after = (await get(`/v1/stats/calibration?${fresh}`)).json();
    expect(after.labelled).toBe(before.labelled + 1);
    expect(after.abusive).toBe(before.abusive + 1);
    // Three attempts scored (two cleared, one abandoned); the re-verifies are not attempts of their own.
    expect(after.events).toBe(3);
    const outcomes = (await get(`/v1/stats/outcomes?${fresh}`)).json();
    expect(outcomes.rows).toContainEqual({
      decision: "challenge",
      outcome: "abuse_confirmed",
      events: 1,
      observations: 1,
    });
    expect(outcomes.decisions).toEqual({ allow: 0, challenge: 3, deny: 0 });
  });

  it("another tenant's event is unknown; a bad id is unknown", async () => {
    const { first } = await challengedThenCleared("s-private");
    expectError(await get(`/v1/attempts/${first}`, otherKey), 404, "unknown_event_id");
    expectError(await get("/v1/attempts/evt_nothing"), 404, "unknown_event_id");
  });
});
