import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";

let t: TestApp;
let key: string;
let reader: string;
let now = Date.parse("2026-11-20T12:00:00Z");

beforeAll(async () => {
  t = await makeTestApp({ clock: () => now });
  await t.tenant("acme");
  key = (await t.key("acme", { scopes: ["verify:write", "feedback:write"] })).apiKey;
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
});
afterAll(() => t.close());

async function newEvent(action = "signup"): Promise<string> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(key),
    payload: { action, subject: {} },
  });
  return res.json().eventId;
}

async function feedback(payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/feedback",
    headers: { ...bearer(key), ...headers },
    payload,
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

async function eventView(eventId: string) {
  const res = await t.app.inject({ method: "GET", url: `/v1/events/${eventId}`, headers: bearer(reader) });
  expect(res.statusCode).toBe(200);
  return res.json() as {
    event: Record<string, unknown>;
    observations: {
      outcome: string;
      status: string;
      value: number | null;
      conflictsWith: string | null;
      feedbackId: string;
    }[];
  };
}

async function summary(query = "") {
  const res = await t.app.inject({
    method: "GET",
    url: `/v1/ledger/summary${query}`,
    headers: bearer(reader),
  });
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe("feedback rules (docs/api.md#post-v1feedback-and-the-ledger)", () => {
  it("answers { ok: true, eventId } and never creates an event", async () => {
    const eventId = await newEvent();
    expect(await feedback({ eventId, outcome: "credit_burn", value: 12.5 })).toMatchObject({
      status: 200,
      body: { ok: true, eventId },
    });
    expect((await feedback({ eventId: "evt_made_up", outcome: "credit_burn" })).status).toBe(404);
  });

  it("rule 2 and 7: exact duplicates share one observation and never double-count, whatever their keys", async () => {
    const eventId = await newEvent();
    const body = { eventId, outcome: "credit_burn", value: 30, observedAt: "2026-11-20T10:00:00+01:00" };
    for (const k of ["a", "b", "c"])
      expect((await feedback(body, { "idempotency-key": `dup-${k}` })).body.ok).toBe(true);
    await feedback(body);
    const view = await eventView(eventId);
    expect(view.observations).toHaveLength(1);
    expect(view.observations[0]).toMatchObject({
      value: 30,
      observedAt: "2026-11-20T09:00:00.000Z",
      unit: "usd",
    });
  });

  it("rule 7: a different value, observedAt or source is a separate observation; bare retries a moment apart are too", async () => {
    const eventId = await newEvent();
    const base = { eventId, outcome: "credit_burn", value: 1, observedAt: "2026-11-20T10:00:00Z" };
    await feedback(base);
    await feedback({ ...base, value: 2 });
    await feedback({ ...base, observedAt: "2026-11-20T10:00:01Z" });
    await feedback({ ...base, source: "billing" });
    await feedback({ eventId, outcome: "converted" });
    now += 5;
    await feedback({ eventId, outcome: "converted" });
    expect((await eventView(eventId)).observations).toHaveLength(6);
  });

  it("idempotency: the same key with an omitted observedAt replays instead of adding or conflicting", async () => {
    const eventId = await newEvent();
    const first = await feedback(
      { eventId, outcome: "chargeback", value: 80 },
      { "idempotency-key": "retry-1" },
    );
    now += 2000;
    const again = await feedback(
      { eventId, outcome: "chargeback", value: 80 },
      { "idempotency-key": "retry-1" },
    );
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect((await eventView(eventId)).observations).toHaveLength(1);
  });

  it("fingerprint: unit defaults to usd, so an explicit usd under the same key replays", async () => {
    const eventId = await newEvent();
    const first = await feedback(
      { eventId, outcome: "credit_burn", value: 9, observedAt: "2026-11-20T08:00:00Z" },
      { "idempotency-key": "unit-1" },
    );
    const again = await feedback(
      { eventId, outcome: "credit_burn", value: 9, unit: "usd", observedAt: "2026-11-20T08:00:00Z" },
      { "idempotency-key": "unit-1" },
    );
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    const credits = await feedback(
      { eventId, outcome: "credit_burn", value: 9, unit: "credits", observedAt: "2026-11-20T08:00:00Z" },
      { "idempotency-key": "unit-1" },
    );
    expect(credits.status).toBe(409);
    expect(credits.body.code).toBe("idempotency_conflict");
  });

  it("idempotency: the Idempotency-Key header wins over the body's idempotencyKey", async () => {
    const eventId = await newEvent();
    await feedback(
      { eventId, outcome: "chargeback", value: 1, idempotencyKey: "body-key" },
      { "idempotency-key": "header-key" },
    );
    // The body key was ignored, so it is still free for a different payload…
    expect(
      (await feedback({ eventId, outcome: "chargeback", value: 2, idempotencyKey: "body-key" })).status,
    ).toBe(200);
    // …while the header key is bound to the first payload.
    const conflict = await feedback(
      { eventId, outcome: "chargeback", value: 3 },
      { "idempotency-key": "header-key" },
    );
    expect(conflict.body.code).toBe("idempotency_conflict");
  });

  it("rule 3: credit_burn and converted coexist", async () => {
    const eventId = await newEvent();
    await feedback({ eventId, outcome: "credit_burn", value: 5 });
    await feedback({ eventId, outcome: "converted", value: 1200 });
    expect((await eventView(eventId)).observations.map((o) => o.status)).toEqual(["effective", "effective"]);
  });

  it("rule 3 and 8: converted, then abuse_confirmed, leaves converted effective; the ack is still ok", async () => {
    const eventId = await newEvent();
    await feedback({ eventId, outcome: "converted", value: 1200 });
    expect(await feedback({ eventId, outcome: "abuse_confirmed" })).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    const [converted, abuse] = (await eventView(eventId)).observations;
    expect(converted).toMatchObject({ outcome: "converted", status: "effective" });
    expect(abuse).toMatchObject({
      outcome: "abuse_confirmed",
      status: "quarantined",
      conflictsWith: converted?.feedbackId,
    });
  });

  it.each(["abuse_confirmed", "multi_account_cluster", "credit_burn", "chargeback"])(
    "rule 4: false_positive conflicts with %s, whichever arrives first",
    async (abuse) => {
      const first = await newEvent();
      await feedback({ eventId: first, outcome: abuse });
      await feedback({ eventId: first, outcome: "false_positive" });
      expect((await eventView(first)).observations.map((o) => o.status)).toEqual([
        "effective",
        "quarantined",
      ]);
      const second = await newEvent();
      await feedback({ eventId: second, outcome: "false_positive" });
      await feedback({ eventId: second, outcome: abuse });
      expect((await eventView(second)).observations.map((o) => [o.outcome, o.status])).toEqual([
        ["false_positive", "effective"],
        [abuse, "quarantined"],
      ]);
    },
  );
});

describe("the ledger read side", () => {
  it("sums credit_burn in usd only, keeps other units apart, reports first-year ARR and lists quarantine", async () => {
    await t.tenant("books");
    const w = (await t.key("books", { scopes: ["verify:write", "feedback:write"] })).apiKey;
    const r = (await t.key("books", { scopes: ["ledger:read"] })).apiKey;
    const ev = async (action: string) =>
      (
        await t.app.inject({
          method: "POST",
          url: "/v1/verify",
          headers: bearer(w),
          payload: { action, subject: {} },
        })
      ).json().eventId;
    const fb = (payload: Record<string, unknown>) => {
      now += 1000; // receipts advance in time, so "newest first" is well defined
      return t.app.inject({ method: "POST", url: "/v1/feedback", headers: bearer(w), payload });
    };
    const a = await ev("signup");
    const b = await ev("api_key");
    await fb({ eventId: a, outcome: "credit_burn", value: 100, observedAt: "2026-11-01T00:00:00Z" });
    await fb({
      eventId: a,
      outcome: "credit_burn",
      value: 250,
      unit: "credits",
      observedAt: "2026-11-01T00:00:00Z",
    });
    await fb({ eventId: b, outcome: "credit_burn", value: 50.5, observedAt: "2026-11-10T00:00:00Z" });
    await fb({ eventId: b, outcome: "converted", value: 9000, observedAt: "2026-11-10T00:00:00Z" });
    await fb({ eventId: b, outcome: "abuse_confirmed", observedAt: "2026-11-11T00:00:00Z" });
    await fb({ eventId: a, outcome: "false_positive", observedAt: "2026-11-12T00:00:00Z" });
    const get = async (q: string) =>
      (await t.app.inject({ method: "GET", url: `/v1/ledger/summary${q}`, headers: bearer(r) })).json();

    const all = await get("");
    expect(all.ledgerUsdTotal).toBeCloseTo(150.5);
    expect(all.creditBurnOtherUnits).toEqual({ credits: 250 });
    expect(all.firstYearArrUsd).toBe(9000);
    expect(all.outcomes.credit_burn).toEqual({
      effective: 3,
      quarantined: 0,
      rejected: 0,
      superseded: 0,
      totals: { usd: 150.5, credits: 250 },
    });
    expect(all.outcomes.abuse_confirmed).toEqual({
      effective: 0,
      quarantined: 1,
      rejected: 0,
      superseded: 0,
      totals: {},
    });
    expect(
      all.quarantined.map((q: { observation: { outcome: string }; conflictsWith: { outcome: string } }) => [
        q.observation.outcome,
        q.conflictsWith.outcome,
      ]),
    ).toEqual([
      ["false_positive", "credit_burn"],
      ["abuse_confirmed", "converted"],
    ]);

    const apiKeyOnly = await get("?action=api_key");
    expect(apiKeyOnly.ledgerUsdTotal).toBeCloseTo(50.5);
    const early = await get("?until=2026-11-05T00:00:00Z");
    expect(early.ledgerUsdTotal).toBe(100);
    expect(early.until).toBe("2026-11-05T00:00:00.000Z");
    const late = await get("?since=2026-11-05T00:00:00Z");
    expect(late.outcomes.converted.effective).toBe(1);
  });

  it("joins one event with its verdict and every observation", async () => {
    const eventId = await newEvent("api_key");
    await feedback({ eventId, outcome: "converted", value: 10 });
    await feedback({ eventId, outcome: "abuse_confirmed" });
    const view = await eventView(eventId);
    expect(view.event).toMatchObject({
      eventId,
      action: "api_key",
      decision: expect.any(String),
      reasons: expect.any(Array),
    });
    expect(view.observations.map((o) => o.status)).toEqual(["effective", "quarantined"]);
  });

  it("needs ledger:read, hides other tenants' events, and rejects bad query parameters", async () => {
    expect(
      (await t.app.inject({ method: "GET", url: "/v1/ledger/summary", headers: bearer(key) })).json().code,
    ).toBe("insufficient_scope");
    const eventId = await newEvent();
    const otherReader = (await t.key("books", { scopes: ["ledger:read"] })).apiKey;
    const res = await t.app.inject({
      method: "GET",
      url: `/v1/events/${eventId}`,
      headers: bearer(otherReader),
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe("unknown_event_id");
    const bad = await t.app.inject({
      method: "GET",
      url: "/v1/ledger/summary?since=last-week",
      headers: bearer(reader),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_query");
    expect(await summary("?action=signup")).toMatchObject({ action: "signup" });
  });
});
