import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * Resolving a quarantined observation (POST /v1/feedback/{feedbackId}/resolution, scope
 * ledger:write): reject and it never counts; accept and it counts like an effective observation while
 * the effective one it contradicted is superseded; the totals of the ledger and of the console's
 * statistics follow; the event's history shows who resolved it and when.
 */
let t: TestApp;
let writer: string;
let reviewer: string;
let reviewerId: string;
let reader: string;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  writer = (await t.key("acme", { scopes: ["verify:write", "feedback:write"] })).apiKey;
  ({ apiKey: reviewer, keyId: reviewerId } = await t.key("acme", {
    scopes: ["ledger:read", "ledger:write"],
  }));
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
});
afterAll(() => t.close());

const post = async (apiKey: string, url: string, payload: Record<string, unknown>) => {
  const res = await t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
};
const get = async (url: string) => {
  const res = await t.app.inject({ method: "GET", url, headers: bearer(reader) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const resolve = (feedbackId: string, payload: Record<string, unknown>) =>
  post(reviewer, `/v1/feedback/${feedbackId}/resolution`, payload);

interface Obs {
  feedbackId: string;
  outcome: string;
  status: string;
  supersededBy: string | null;
  resolution: { resolution: string; resolvedBy: string; resolvedAt: string; note: string | null } | null;
}
const observations = async (eventId: string): Promise<Obs[]> =>
  (await get(`/v1/events/${eventId}`)).observations;

/** A fresh event with an effective observation and a quarantined one that contradicts it. */
async function conflicted(first: Record<string, unknown>, second: Record<string, unknown>) {
  const v = await post(writer, "/v1/verify", { action: "signup", subject: {} });
  const eventId = v.body.eventId as string;
  expect((await post(writer, "/v1/feedback", { eventId, ...first })).status).toBe(200);
  expect((await post(writer, "/v1/feedback", { eventId, ...second })).status).toBe(200);
  const [effective, quarantined] = await observations(eventId);
  expect(quarantined?.status).toBe("quarantined");
  return { eventId, effective: effective as Obs, quarantined: quarantined as Obs };
}

describe("resolving a quarantined observation", () => {
  it("reject: it leaves the quarantined list, never counts, and its history says who, when and why", async () => {
    const e = await conflicted(
      { outcome: "credit_burn", value: 40, unit: "usd" },
      { outcome: "false_positive", source: "manual_review" },
    );
    const before = await get("/v1/ledger/summary");
    expect(before.quarantined.map((q: { observation: Obs }) => q.observation.feedbackId)).toContain(
      e.quarantined.feedbackId,
    );
    const resolving = Date.now();
    const res = await resolve(e.quarantined.feedbackId, { resolution: "reject", note: "  burn was real  " });
    const resolved = Date.now();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      feedbackId: e.quarantined.feedbackId,
      eventId: e.eventId,
      status: "rejected",
      resolution: "reject",
      note: "burn was real",
      resolvedBy: reviewerId,
      resolvedAt: expect.any(String),
      superseded: [],
    });
    const after = await get("/v1/ledger/summary");
    expect(after.ledgerUsdTotal).toBe(before.ledgerUsdTotal);
    expect(after.outcomes.false_positive).toMatchObject({
      effective: before.outcomes.false_positive.effective,
      quarantined: before.outcomes.false_positive.quarantined - 1,
      rejected: 1,
    });
    expect(after.quarantined.map((q: { observation: Obs }) => q.observation.feedbackId)).not.toContain(
      e.quarantined.feedbackId,
    );
    const [burn, fp] = await observations(e.eventId);
    expect(burn).toMatchObject({ status: "effective", resolution: null, supersededBy: null });
    expect(fp).toMatchObject({
      status: "rejected",
      resolution: { resolution: "reject", resolvedBy: reviewerId, note: "burn was real" },
    });
    // Stamped when it was resolved: the answer's time, stored as given.
    expect(fp?.resolution?.resolvedAt).toBe(res.body.resolvedAt);
    const at = Date.parse(res.body.resolvedAt);
    expect(at >= resolving && at <= resolved, `${resolving} ≤ ${at} ≤ ${resolved}`).toBe(true);
  });

  it("accept: it counts like an effective observation and supersedes the one it contradicted; ledger and outcome totals follow", async () => {
    const e = await conflicted(
      { outcome: "converted", value: 1200, unit: "usd" },
      { outcome: "abuse_confirmed", source: "trust_queue" },
    );
    const before = await get("/v1/ledger/summary");
    const statsBefore = await get("/v1/stats/outcomes");
    const decision = (await get(`/v1/events/${e.eventId}`)).event.wouldBeDecision;
    const cell = (stats: { rows: { decision: string; outcome: string; events: number }[] }, o: string) =>
      stats.rows.find((r) => r.decision === decision && r.outcome === o)?.events ?? 0;

    const res = await resolve(e.quarantined.feedbackId, { resolution: "accept" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "effective",
      resolution: "accept",
      note: null,
      resolvedBy: reviewerId,
      superseded: [e.effective.feedbackId],
    });

    const after = await get("/v1/ledger/summary");
    expect(after.firstYearArrUsd).toBe(before.firstYearArrUsd - 1200);
    expect(after.outcomes.abuse_confirmed.effective).toBe(before.outcomes.abuse_confirmed.effective + 1);
    expect(after.outcomes.abuse_confirmed.quarantined).toBe(before.outcomes.abuse_confirmed.quarantined - 1);
    expect(after.outcomes.converted.superseded).toBe(1);
    const statsAfter = await get("/v1/stats/outcomes");
    expect(statsAfter.quarantinedCount).toBe(statsBefore.quarantinedCount - 1);
    expect(cell(statsAfter, "abuse_confirmed")).toBe(cell(statsBefore, "abuse_confirmed") + 1);
    expect(cell(statsAfter, "converted")).toBe(cell(statsBefore, "converted") - 1);

    const [conv, abuse] = await observations(e.eventId);
    expect(conv).toMatchObject({
      status: "superseded",
      supersededBy: e.quarantined.feedbackId,
      resolution: null,
    });
    expect(abuse).toMatchObject({
      status: "effective",
      resolution: { resolution: "accept", resolvedBy: reviewerId, note: null },
    });
  });

  it("the same resolution asked again answers the stored one (who and when of the first) as a replay", async () => {
    const e = await conflicted({ outcome: "abuse_confirmed" }, { outcome: "false_positive" });
    const first = await resolve(e.quarantined.feedbackId, { resolution: "accept", note: "reviewed" });
    expect(first.status).toBe(200);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    const again = await resolve(e.quarantined.feedbackId, { resolution: "accept", note: "other words" });
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toEqual(first.body);
  });
});
