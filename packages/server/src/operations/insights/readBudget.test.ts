import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../errors.js";
import {
  bearer,
  CHROME_HEADERS,
  CHROME_UA,
  expectError,
  makeTestApp,
  type TestApp,
  testEvent,
} from "../../testing/harness.js";
import { ReadBudget } from "./readBudget.js";

describe("ReadBudget", () => {
  it("admits reads while the key's minute has rows left, counting what running reads reserved", () => {
    let now = 60_000 * 100 + 15_000;
    const budget = new ReadBudget(1000, () => now);
    const first = budget.admit("k1", 600);
    const second = budget.admit("k1", 600); // 600 of 1000 taken: admitted, it may overshoot once
    expect(() => budget.admit("k1", 1)).toThrow(ApiError);
    // Another key has its own budget.
    budget.admit("k2", 1000).settle();
    first.add(100);
    first.settle(); // 100 spent, 600 reserved by the second
    const third = budget.admit("k1", 50);
    second.add(900);
    second.settle();
    third.add(50);
    third.settle();
    try {
      budget.admit("k1", 1);
      expect.unreachable();
    } catch (err) {
      expect((err as ApiError).code).toBe("rate_limited");
      expect(err).toMatchObject({ status: 429, headers: { "retry-after": "45" } });
    }
    now += 45_000; // the next minute
    budget.admit("k1", 1000).settle();
  });

  it("names the key on its reads' meter: PostgreSQL runs one key's reads one at a time (readSlots.ts)", () => {
    const budget = new ReadBudget(1000, () => 0);
    expect(budget.admit("k1", 1).meter.holder).toBe("k1");
  });

  it("counts a settled read once, at least one row, and ignores rows added after", () => {
    const budget = new ReadBudget(1000, () => 0);
    const empty = budget.admit("k", 500);
    empty.settle();
    empty.settle();
    const late = budget.admit("k", 998);
    late.settle();
    late.add(10_000);
    // 1 + 1 spent: 998 left.
    const most = budget.admit("k", 998);
    most.add(997);
    most.settle();
    budget.admit("k", 1).settle();
    expect(() => budget.admit("k", 1)).toThrow(ApiError);
  });
});

describe("ReadBudget in the store's time", () => {
  it("refuses a key's reads once their time in the store this minute is spent, whatever rows they answered", () => {
    let now = 60_000 * 100;
    const budget = new ReadBudget(1000, () => now, 100);
    const scan = budget.admit("k1", 1);
    scan.meter(60);
    scan.meter(50); // the read that spends it finishes
    scan.settle(); // one row answered
    try {
      budget.admit("k1", 1);
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: "rate_limited", status: 429 });
      expect((err as ApiError).message).toContain("0.1 s of the store's time");
    }
    budget.admit("k2", 1).settle();
    now += 60_000;
    budget.admit("k1", 1).settle();
  });
});

describe("the read budget on the console's routes", () => {
  let t: TestApp;
  let reader: string;
  let writer: string;
  let now = Date.parse("2026-11-25T12:00:10Z");
  beforeAll(async () => {
    t = await makeTestApp({ clock: () => now, env: { WARDEN_READ_ROWS_PER_MINUTE: "1000" } });
    await t.tenant("acme");
    reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
    writer = (await t.key("acme", { scopes: ["verify:write", "feedback:write"] })).apiKey;
    // Concurrent records share the store's group commits.
    await Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        t.store.events.record(
          testEvent(`evt_b${String(i).padStart(4, "0")}`, { tenantId: "acme", createdAt: now - 60_000 - i }),
          undefined,
        ),
      ),
    );
  });
  afterAll(() => t.close());

  const read = (url: string, key = reader) =>
    t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${key}` } });
  const verify = () =>
    t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(writer),
      payload: { action: "signup", subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS } },
    });

  it("answers the read after the key's budget with 429 and Retry-After; verify and feedback go on", async () => {
    const exportOf500 = "/v1/events?format=csv&limit=500";
    for (let i = 0; i < 2; i++) {
      const res = await read(exportOf500);
      expect(res.statusCode).toBe(200);
      expect(res.body.split("\r\n").length).toBe(502); // header, 500 rows, the final CRLF
    }
    const over = await read(exportOf500);
    expectError(over, 429, "rate_limited");
    expect(over.headers["retry-after"]).toBe("50");
    // Every console read of the key waits, aggregates too.
    expectError(await read("/v1/stats/challenges"), 429, "rate_limited");

    const v = await verify();
    expect(v.statusCode).toBe(200);
    const feedback = await t.app.inject({
      method: "POST",
      url: "/v1/feedback",
      headers: { ...bearer(writer), "idempotency-key": "budget-1" },
      payload: { eventId: (v.json() as { eventId: string }).eventId, outcome: "converted" },
    });
    expect(feedback.statusCode).toBe(200);

    now += 50_000; // the next minute
    // A read reserves its limit only while it runs: three empty pages of 500 cost a row each.
    for (let i = 0; i < 3; i++)
      expect((await read("/v1/events?limit=500&session=nobody")).statusCode).toBe(200);
    expect((await read(exportOf500)).statusCode).toBe(200);
    // A JSON page costs its rows too: 3 + 500 + 497 = 1000.
    expect((await read("/v1/events?limit=497")).statusCode).toBe(200);
    expectError(await read("/v1/events?limit=1"), 429, "rate_limited");
  });
});

describe("the read budget in the store's time on the console's routes", () => {
  let t: TestApp;
  let reader: string;
  const now = Date.parse("2026-11-25T12:00:10Z");
  beforeAll(async () => {
    t = await makeTestApp({
      clock: () => now,
      env: { WARDEN_READ_STORE_SECONDS_PER_MINUTE: "1" },
      // The store's time, stated rather than waited for: each list read reports 0.6 s.
      wrapStore: (store) => ({
        ...store,
        insights: {
          ...store.insights,
          listEvents: (tenantId, filter, limit, meter) => {
            meter?.(600);
            return store.insights.listEvents(tenantId, filter, limit, meter);
          },
        },
      }),
    });
    await t.tenant("acme");
    reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
  });
  afterAll(() => t.close());

  it("charges a read that answers nothing the time its scan took: 429 once the key's store time is spent", async () => {
    const read = (url: string) =>
      t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${reader}` } });
    const nothing = "/v1/events?reasonCode=hosting_network&limit=1";
    for (let i = 0; i < 2; i++) {
      const res = await read(nothing);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ items: [] });
    }
    const over = await read(nothing);
    expectError(over, 429, "rate_limited");
    expect(over.json().message).toContain("1 s of the store's time");
    expect(over.headers["retry-after"]).toBe("50");
  });
});
