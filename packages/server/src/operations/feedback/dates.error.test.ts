import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../store/postgres/postgresStore.js";
import { bearer, expectError, makeTestApp, type TestApp } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { CONSOLE_PERIOD_ROUTES } from "../../testing/readRoutes.js";

/**
 * A date-time in the right form that names no instant Date can hold (a leap second: RFC 3339 and the
 * schema's format allow 23:59:60) is a 400 with the route's date code, on every store: never a 500
 * (SQLite) or a 503 store_unavailable (PostgreSQL). Likewise a NUL character in a query parameter
 * or a path segment, which PostgreSQL cannot hold in text.
 */

const LEAP = "2024-06-30T23:59:60Z";
const LEAP_OFFSET = "2024-07-01T00:59:60+01:00";

const READS = ["/v1/ledger/summary", ...CONSOLE_PERIOD_ROUTES];

function suite(name: string, open: () => Promise<TestApp>) {
  describe(name, () => {
    let t: TestApp;
    let key: string;
    let eventId: string;
    beforeAll(async () => {
      t = await open();
      await t.tenant("acme");
      key = (await t.key("acme")).apiKey;
      const v = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(key),
        payload: { action: "signup", session: "s", subject: {} },
      });
      eventId = v.json().eventId;
    });
    afterAll(() => t.close());

    const get = (url: string) => t.app.inject({ method: "GET", url, headers: bearer(key) });

    it.each(
      READS.flatMap((route) => [
        `${route}?since=${LEAP}`,
        `${route}?until=${encodeURIComponent(LEAP_OFFSET)}`,
      ]),
    )("GET %s → 400 invalid_query naming the parameter", async (url) => {
      const res = await get(url);
      expectError(res, 400, "invalid_query");
      expect(res.json().message).toMatch(/^(since|until) is not a date-time that exists/);
    });

    it("the ledger summary still answers for a date-time that exists, including the second before", async () => {
      const res = await get("/v1/ledger/summary?since=2024-06-30T23:59:59Z&until=2099-01-01T00:00:00Z");
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        since: "2024-06-30T23:59:59.000Z",
        until: "2099-01-01T00:00:00.000Z",
      });
    });

    it.each([
      ...READS.map((route) => `${route}?action=%00`),
      "/v1/events?session=%00",
      "/v1/events/evt_%00x",
      `/v1/events?cursor=${Buffer.from(JSON.stringify([1, "\u0000"])).toString("base64url")}`,
    ])("GET %s (a NUL) → 400 invalid_query, on every store", async (url) => {
      expectError(await get(url), 400, "invalid_query");
    });

    it.each(READS.map((route) => `${route}?sinse=2024-01-01T00:00:00Z`))(
      "GET %s (an unknown parameter) → 400 invalid_query",
      async (url) => {
        expectError(await get(url), 400, "invalid_query");
      },
    );

    it("an impossible calendar date (30 February) is refused by the format: 400 invalid_query", async () => {
      expectError(await get("/v1/ledger/summary?since=2024-02-30T00:00:00Z"), 400, "invalid_query");
    });

    it("feedback observedAt on a leap second → 400 invalid_observed_at, nothing stored", async () => {
      const post = (observedAt: string) =>
        t.app.inject({
          method: "POST",
          url: "/v1/feedback",
          headers: bearer(key),
          payload: { eventId, outcome: "converted", observedAt },
        });
      expectError(await post(LEAP), 400, "invalid_observed_at");
      expectError(await post("2024-02-30T00:00:00Z"), 400, "invalid_observed_at");
      const summary = await get("/v1/ledger/summary");
      expect(summary.json().outcomes).toEqual({});
    });
  });
}

suite("dates on SQLite", () => makeTestApp());

const schema = await postgresSchemaOrSkip("dates on PostgreSQL", "the PostgreSQL date-input tests");
if (schema) {
  suite("dates on PostgreSQL", async () =>
    makeTestApp({
      env: { WARDEN_STORE_TIMEOUT_MS: "2000" },
      store: await openPostgresStore({
        url: TEST_POSTGRES_URL,
        statementTimeoutMs: 2000,
        poolSize: 4,
        schema,
      }),
    }));
}
