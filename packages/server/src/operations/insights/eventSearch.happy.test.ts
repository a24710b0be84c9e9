import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";
import { REASON_CODES, type ReasonCode } from "../verify/reasonCodes.js";
import { emailHash } from "../verify/signals/email.js";

/**
 * Finding a person through the API: events recorded by verify are found by the email hash, the
 * network, the reason code and degraded, in JSON pages and CSV; reasons are counted per code.
 */
let t: TestApp;
let reader: string;
let writer: string;
const ALICE = emailHash("Alice@Example.com");
const BOB = emailHash("bob@example.com");
type Verdict = { eventId: string; decision: string; reasonDetails: { code: string }[] };
const verdicts: Verdict[] = [];
const alice: string[] = [];

async function verify(action: string, subject: Record<string, unknown>): Promise<Verdict> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(writer),
    payload: { action, subject: { userAgent: "curl/8.5.0", ...subject } },
  });
  expect(res.statusCode).toBe(200);
  const v = res.json() as Verdict;
  verdicts.push(v);
  return v;
}

const get = (url: string) =>
  t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${reader}` } });
const ids = async (query: string) => {
  const res = await get(`/v1/events?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { items: { eventId: string }[] }).items.map((e) => e.eventId);
};

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
  writer = (await t.key("acme", { scopes: ["verify:write"] })).apiKey;
  for (let i = 0; i < 3; i++) {
    alice.unshift((await verify("signup", { emailSha256: ALICE, ipTrunc: `198.51.100.${i + 1}` })).eventId);
  }
  await verify("login", { emailSha256: BOB, ipTrunc: "2001:db8:7:1::5" });
  await verify("login", {});
});
afterAll(() => t.close());

describe("GET /v1/events finds a person", () => {
  it("an email hash (any case) finds exactly that address's events, newest first", async () => {
    expect(await ids(`emailHash=${ALICE.toUpperCase()}`)).toEqual(alice);
    expect(await ids(`emailHash=${BOB}`)).toHaveLength(1);
  });

  it("an address finds the events of its truncated network (/24, /48); a narrower network too", async () => {
    expect(await ids("network=198.51.100.200")).toEqual(alice);
    expect(await ids(`network=${encodeURIComponent("198.51.100.0/24")}`)).toEqual(alice);
    expect(await ids(`network=${encodeURIComponent("2001:db8:7:ffff::/64")}`)).toEqual([
      verdicts[3]?.eventId,
    ]);
    expect(await ids("network=198.51.101.1")).toEqual([]);
  });

  it("a reason code finds the events whose verdict gave it, and combines with the email", async () => {
    const code = verdicts[4]?.reasonDetails[0]?.code as string;
    const expected = verdicts
      .filter((v) => v.reasonDetails.some((r) => r.code === code))
      .map((v) => v.eventId)
      .reverse();
    expect(await ids(`reasonCode=${code}`)).toEqual(expected);
    expect(await ids(`reasonCode=${code}&emailHash=${ALICE}`)).toEqual(
      expected.filter((id) => alice.includes(id)),
    );
  });

  it("degraded=false finds the scored events, degraded=true none of them", async () => {
    expect(await ids("degraded=false")).toHaveLength(5);
    expect(await ids("degraded=true")).toEqual([]);
  });

  it("pages of a search continue by cursor, and its CSV holds the same events", async () => {
    const first = (await get(`/v1/events?emailHash=${ALICE}&limit=2`)).json() as {
      items: { eventId: string }[];
      nextCursor: string;
    };
    expect(first.items.map((e) => e.eventId)).toEqual(alice.slice(0, 2));
    expect(await ids(`emailHash=${ALICE}&cursor=${first.nextCursor}`)).toEqual(alice.slice(2));
    const csv = await get(`/v1/events?emailHash=${ALICE}&format=csv`);
    expect(csv.statusCode).toBe(200);
    const rows = csv.body.trim().split(/\r?\n/).slice(1);
    expect(rows.map((r) => r.split(",")[0])).toEqual(alice);
  });
});

describe("GET /v1/stats/reasons and /v1/stats/actions", () => {
  it("counts the period's events per reason code with its category and the decisions given", async () => {
    const res = await get("/v1/stats/reasons");
    expect(res.statusCode).toBe(200);
    const body = res.json() as {
      tenantId: string;
      rows: {
        code: ReasonCode;
        category: string;
        events: number;
        decisions: { allow: number; challenge: number; deny: number };
      }[];
    };
    expect(body.tenantId).toBe("acme");
    const expected = new Map<string, number>();
    for (const v of verdicts)
      for (const c of new Set(v.reasonDetails.map((r) => r.code)))
        expected.set(c, (expected.get(c) ?? 0) + 1);
    expect(new Map(body.rows.map((r) => [r.code, r.events]))).toEqual(expected);
    for (const r of body.rows) {
      expect(r.category).toBe(REASON_CODES[r.code]);
      expect(r.decisions.allow + r.decisions.challenge + r.decisions.deny).toBe(r.events);
    }
    const events = body.rows.map((r) => r.events);
    expect(events).toEqual([...events].sort((a, b) => b - a));
    const logins = (await get("/v1/stats/reasons?action=login")).json() as { rows: { events: number }[] };
    expect(Math.max(...logins.rows.map((r) => r.events))).toBeLessThanOrEqual(2);
    const csv = await get("/v1/stats/reasons?format=csv");
    expect(csv.body.split(/\r?\n/)[0]).toBe("code,category,events,allow,challenge,deny");
  });

  it("lists the tenant's actions once each, in order", async () => {
    expect((await get("/v1/stats/actions")).json()).toEqual({
      tenantId: "acme",
      actions: ["login", "signup"],
    });
  });

  it("a period's counts are reused for the calibration scans' few seconds; another period reads afresh", async () => {
    const until = Date.now() + 3_600_000;
    const period = (end: number) =>
      `since=${new Date(until - 86_400_000).toISOString()}&until=${new Date(end).toISOString()}`;
    const total = async (end: number) =>
      ((await get(`/v1/stats/reasons?${period(end)}`)).json() as { rows: { events: number }[] }).rows.reduce(
        (n, r) => n + r.events,
        0,
      );
    const before = await total(until);
    const added = await verify("signup", {});
    expect(await total(until)).toBe(before);
    expect(await total(until + 1000)).toBe(before + new Set(added.reasonDetails.map((r) => r.code)).size);
  });
});
