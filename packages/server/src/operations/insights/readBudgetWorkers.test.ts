import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../store/postgres/postgresStore.js";
import { expectError, makeTestApp, type TestApp, testEvent } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";

/**
 * Under `warden serve --workers N` the primary hands each connection to the next worker, so a key's
 * readers spread over all of them: each worker holds 1/N of the key's read budget, and the key gets
 * the budget its settings state rather than N budgets. Here one worker of two, as its primary starts
 * it (WARDEN_WORKERS=2 in its environment).
 */
const SUITE = "the read budget under --workers";
const schema = await postgresSchemaOrSkip(SUITE, "the read-budget-per-worker test");

if (schema) {
  let t: TestApp;
  let reader: string;
  const now = Date.parse("2026-11-25T12:00:10Z");
  beforeAll(async () => {
    const store = await openPostgresStore({
      url: TEST_POSTGRES_URL,
      statementTimeoutMs: 2000,
      poolSize: 2,
      poolMin: 0,
      readShare: 100,
      schema,
    });
    t = await makeTestApp({
      store,
      clock: () => now,
      env: {
        WARDEN_DATABASE_URL: TEST_POSTGRES_URL,
        WARDEN_WORKERS: "2",
        WARDEN_READ_ROWS_PER_MINUTE: "1000",
      },
    });
    await t.tenant("acme");
    reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
    // Twenty at a time: the two request connections' queue waits at most the statement timeout.
    for (let i = 0; i < 600; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          store.events.record(
            testEvent(`evt_w${String(i + j).padStart(4, "0")}`, {
              tenantId: "acme",
              createdAt: now - 60_000 - i - j,
            }),
            undefined,
          ),
        ),
      );
    }
  });
  afterAll(() => t?.close());

  describe(SUITE, () => {
    it("one worker of two answers 429 with Retry-After past half the key's rows a minute", async () => {
      const read = (url: string) =>
        t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${reader}` } });
      // 500 rows: this worker's whole share of 1,000.
      const first = await read("/v1/events?format=csv&limit=500");
      expect(first.statusCode).toBe(200);
      const over = await read("/v1/events?limit=1");
      expectError(over, 429, "rate_limited");
      expect(over.json().message).toContain("500 rows");
      expect(over.headers["retry-after"]).toBe("50");
    });
  });
}
