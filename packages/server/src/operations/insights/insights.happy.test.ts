import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * The console's read API on a seeded store: every figure is checked against what was seeded through
 * verify, challenge and feedback, not only that the routes answer.
 */
let t: TestApp;
let writer: string;
let reader: string;
let now = Date.parse("2026-11-20T12:00:00Z");
const start = now;

const browser = (i: number) => ({
  userAgent: CHROME_UA,
  headers: CHROME_HEADERS,
  emailSha256: (i.toString(16).padStart(2, "0") + "a".repeat(62)).slice(0, 64),
  ipTrunc: `198.51.${i}.0/24`,
});
const script = (i: number) => ({ userAgent: "curl/8.5.0", ipTrunc: `203.0.${i}.0/24` });

async function verify(action: string, subject: Record<string, unknown>, session: string) {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(writer),
    payload: { action, subject, session },
  });
  expect(res.statusCode).toBe(200);
  return res.json() as { eventId: string; decision: string; actorType: string; degraded: boolean };
}

async function get(url: string, key = reader) {
  const res = await t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${key}` } });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

const verdicts: { eventId: string; decision: string; action: string; session: string }[] = [];
/** The event the explorer test challenges and reports converted (an abuse report after it is quarantined). */
let converted = "";

beforeAll(async () => {
  t = await makeTestApp({ clock: () => now });
  await t.tenant("acme");
  writer = (await t.key("acme", { scopes: ["verify:write", "challenge:write", "feedback:write"] })).apiKey;
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
  for (let i = 0; i < 12; i++) {
    const action = i % 3 === 0 ? "api_key" : "signup";
    const session = `sess-${i}`;
    const v = await verify(action, i % 2 === 0 ? browser(i) : script(i), session);
    verdicts.push({ eventId: v.eventId, decision: v.decision, action, session });
    now += 20 * 60_000; // 20 minutes apart: the 12 events span four hours
  }
});
afterAll(() => t.close());

describe("decisions over time", () => {
  it("counts every event of the period once, by hour, decision and action", async () => {
    const { status, body } = await get(
      `/v1/stats/decisions?since=${new Date(start).toISOString()}&until=${new Date(now).toISOString()}`,
    );
    expect(status).toBe(200);
    expect(body.bucket).toBe("hour");
    const rows = body.rows as { bucketStart: string; decision: string; action: string; count: number }[];
    expect(rows.reduce((n, r) => n + r.count, 0)).toBe(12);
    expect(new Set(rows.map((r) => r.bucketStart)).size).toBe(4);
    for (const d of ["allow", "challenge", "deny"]) {
      expect(rows.filter((r) => r.decision === d).reduce((n, r) => n + r.count, 0)).toBe(
        verdicts.filter((v) => v.decision === d).length,
      );
    }
    const apiKeyOnly = await get(
      `/v1/stats/decisions?since=${new Date(start).toISOString()}&until=${new Date(now).toISOString()}&action=api_key&bucket=day`,
    );
    expect(apiKeyOnly.body.rows).toHaveLength(
      new Set(
        apiKeyOnly.body.rows.map(
          (r: { decision: string; actorType: string }) => `${r.decision}${r.actorType}`,
        ),
      ).size,
    );
    expect(apiKeyOnly.body.rows.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(4);
  });

  it("answers CSV with format=csv: a header and the same counts", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: `/v1/stats/decisions?since=${new Date(start).toISOString()}&format=csv&until=${new Date(now).toISOString()}`,
      headers: { authorization: `Bearer ${reader}` },
    });
    expect(res.headers["content-type"]).toMatch(/^text\/csv/);
    const lines = res.body.trim().split("\r\n");
    expect(lines[0]).toBe("bucketStart,action,decision,actorType,degraded,enforcementMode,count");
    expect(lines.slice(1).reduce((n, l) => n + Number(l.split(",").at(-1)), 0)).toBe(12);
  });
});

describe("event explorer", () => {
  it("finds an event by session and pages through the period newest first", async () => {
    const target = verdicts[5] as (typeof verdicts)[number];
    const bySession = await get(
      `/v1/events?session=${target.session}&since=${new Date(start).toISOString()}`,
    );
    expect(bySession.body.items.map((e: { eventId: string }) => e.eventId)).toEqual([target.eventId]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { eventId: string }[]; nextCursor: string | null } } = await get(
        `/v1/events?since=${new Date(start).toISOString()}&limit=5${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...page.body.items.map((e) => e.eventId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(verdicts.map((v) => v.eventId).reverse());
  });

  it("shows one event in full: principal, receipt claims, challenges and observations", async () => {
    const challenged = verdicts.find((v) => v.decision === "challenge");
    if (!challenged) throw new Error("the seed produced no challenge");
    converted = challenged.eventId;
    const issued = await t.app.inject({
      method: "POST",
      url: "/v1/challenge",
      headers: bearer(writer),
      payload: { eventId: challenged.eventId, session: challenged.session },
    });
    expect(issued.statusCode).toBe(200);
    await t.app.inject({
      method: "POST",
      url: "/v1/feedback",
      headers: bearer(writer),
      payload: { eventId: challenged.eventId, outcome: "converted" },
    });
    const { status, body } = await get(`/v1/events/${challenged.eventId}`);
    expect(status).toBe(200);
    expect(body.event.principal).toEqual({
      resolved: false,
      operator: "",
      onBehalfOf: "",
      identityBasis: [],
    });
    expect(body.event.tokenClaims).toMatchObject({
      tid: "acme",
      jti: challenged.eventId,
      sub: challenged.session,
      decision: "challenge",
    });
    expect(body.event.decidedBy).toBe("model");
    expect(body.challenges).toHaveLength(1);
    expect(body.challenges[0]).toMatchObject({ challengeId: issued.json().challengeId, clearedAt: null });
    expect(body.observations.map((o: { outcome: string }) => o.outcome)).toEqual(["converted"]);
  });
});

describe("outcomes, calibration and what-if", () => {
  beforeAll(async () => {
    // Abuse reported on the scripted attempts that got through; people reported converted.
    for (const [i, v] of verdicts.entries()) {
      const outcome = i % 2 === 1 ? "abuse_confirmed" : "converted";
      await t.app.inject({
        method: "POST",
        url: "/v1/feedback",
        headers: bearer(writer),
        payload: { eventId: v.eventId, outcome, observedAt: new Date(start + 1000).toISOString() },
      });
    }
  });
  const period = () => `since=${new Date(start).toISOString()}&until=${new Date(now).toISOString()}`;

  it("crosses the engine's decisions with the effective outcomes", async () => {
    const { body } = await get(`/v1/stats/outcomes?${period()}`);
    const cell = (d: string, o: string) =>
      (body.rows as { decision: string; outcome: string; events: number }[]).find(
        (r) => r.decision === d && r.outcome === o,
      )?.events ?? 0;
    const abusive = (v: (typeof verdicts)[number], i: number) => i % 2 === 1 && v.eventId !== converted;
    for (const d of ["allow", "challenge", "deny"]) {
      expect(cell(d, "abuse_confirmed")).toBe(
        verdicts.filter((v, i) => v.decision === d && abusive(v, i)).length,
      );
    }
    expect(body.decisions.allow + body.decisions.challenge + body.decisions.deny).toBe(12);
    // abuse_confirmed after converted on the explorer's event is quarantined; converted stays effective.
    const convertedIndex = verdicts.findIndex((v) => v.eventId === converted);
    expect(body.quarantinedCount).toBe(convertedIndex % 2 === 1 ? 1 : 0);
    expect(verdicts.filter(abusive).length).toBe(convertedIndex % 2 === 1 ? 5 : 6);
  });

  it("bins the estimated risk against the observed abuse rate with Wilson intervals", async () => {
    const { body } = await get(`/v1/stats/calibration?${period()}&bins=5`);
    expect(body.bins).toHaveLength(5);
    expect(body.events).toBe(12);
    expect(body.labelled).toBe(12);
    expect(body.abusive).toBe(verdicts.filter((v, i) => i % 2 === 1 && v.eventId !== converted).length);
    for (const b of body.bins as {
      labelled: number;
      abusive: number;
      observedRate: number | null;
      interval: { low: number; high: number } | null;
    }[]) {
      if (b.labelled === 0) {
        expect(b.observedRate).toBeNull();
        continue;
      }
      expect(b.observedRate).toBeCloseTo(b.abusive / b.labelled, 4);
      expect(b.interval?.low).toBeLessThanOrEqual(b.observedRate as number);
      expect(b.interval?.high).toBeGreaterThanOrEqual(b.observedRate as number);
    }
  });

  it("what-if: the recorded weights replay the recorded decisions; a higher falseAllow allows no more", async () => {
    const same = (await get(`/v1/stats/what-if?${period()}`)).body;
    expect(same.whatIf).toEqual(same.recorded);
    expect(same.replayed + same.kept).toBe(12);
    const strict = (await get(`/v1/stats/what-if?${period()}&falseAllow=50`)).body;
    expect(strict.whatIf.allow).toBeLessThan(same.whatIf.allow);
    expect(strict.whatIf.challenge + strict.whatIf.deny).toBeGreaterThan(
      same.whatIf.challenge + same.whatIf.deny,
    );
    const lenient = (await get(`/v1/stats/what-if?${period()}&falseChallenge=50`)).body;
    expect(lenient.whatIf.allow).toBeGreaterThanOrEqual(same.whatIf.allow);
    expect(strict.policy).toEqual({ decisionCosts: { falseAllow: 50, falseChallenge: 1, falseDeny: 3 } });
    const perAction = (await get(`/v1/stats/what-if?${period()}&falseAllow=2&action=signup`)).body;
    expect(perAction.policy).toEqual({
      actions: { signup: { decisionCosts: { falseAllow: 2, falseChallenge: 1, falseDeny: 3 } } },
    });
  });
});

describe("the tenant's decisionCosts", () => {
  it("are what verify uses for the weights a request leaves out, and where what-if starts", async () => {
    await t.tenant("beta");
    const betaWriter = (await t.key("beta", { scopes: ["verify:write"] })).apiKey;
    const betaReader = (await t.key("beta", { scopes: ["ledger:read"] })).apiKey;
    await t.store.policies.put(
      "beta",
      JSON.stringify({
        decisionCosts: { falseAllow: 7 },
        actions: { api_key: { decisionCosts: { falseDeny: 9 } } },
      }),
      now,
    );
    const costsOf = async (action: string, context?: Record<string, unknown>) => {
      const v = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(betaWriter),
        payload: { action, subject: {}, ...(context ? { context } : {}) },
      });
      return (await get(`/v1/events/${v.json().eventId}`, betaReader)).body.event.costs;
    };
    expect(await costsOf("signup")).toEqual({ falseAllow: 7, falseChallenge: 1, falseDeny: 3 });
    expect(await costsOf("api_key")).toEqual({ falseAllow: 7, falseChallenge: 1, falseDeny: 9 });
    // A weight the request sends wins; an invalid one falls back to the tenant's.
    expect(await costsOf("signup", { decisionCosts: { falseAllow: 2, falseDeny: -1 } })).toEqual({
      falseAllow: 2,
      falseChallenge: 1,
      falseDeny: 3,
    });
    const whatIf = (await get("/v1/stats/what-if?action=api_key", betaReader)).body;
    expect(whatIf.currentCosts).toEqual({ falseAllow: 7, falseChallenge: 1, falseDeny: 9 });
    expect(whatIf.costs).toEqual(whatIf.currentCosts);
    expect(whatIf.whatIf).toEqual(whatIf.recorded);
  });
});
