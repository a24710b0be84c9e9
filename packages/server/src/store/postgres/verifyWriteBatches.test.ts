import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEvent } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import type { Store } from "../interfaces.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * PostgreSQL batches verify's writes of concurrent requests (verifyWriteBatches.ts). A batch is one
 * statement, so one request's data that the database refuses must not fail the others' writes.
 */
const SUITE = "PostgreSQL write batches";
const schema = await postgresSchemaOrSkip(SUITE, "the write-batch isolation tests");

if (schema) {
  describe(SUITE, () => {
    let store: Store;
    beforeAll(async () => {
      store = await openPostgresStore({
        url: TEST_POSTGRES_URL,
        schema,
        statementTimeoutMs: 2000,
        poolSize: 2,
      });
      await store.tenants.create({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
      await store.apiKeys.create(
        {
          id: "key_on",
          tenantId: "t1",
          scopes: ["verify:write"],
          logOnly: false,
          createdAt: 1,
          revokedAt: null,
        },
        "hash-on",
      );
    });
    afterAll(async () => {
      await store?.close();
    });

    it("an event the database refuses (a NUL byte) fails alone; the events recorded with it are written", async () => {
      const good = Array.from({ length: 6 }, (_, i) => testEvent(`evt_ok_${i}`, { keyId: "key_on" }));
      const bad = testEvent("evt_nul", { keyId: "key_on", action: "sign\u0000up" });
      const outcomes = await Promise.all(
        [good[0], bad, ...good.slice(1)].map((e) =>
          store.events
            .record(e as typeof bad, undefined, undefined, { activeKey: true })
            .then((o) => o.kind)
            .catch((err: Error) => err.name),
        ),
      );
      expect(outcomes).toEqual(["recorded", "StoreRejectedError", ...good.slice(1).map(() => "recorded")]);
      for (const e of good) expect(await store.events.get("t1", e.id)).toEqual(e);
      expect(await store.events.get("t1", "evt_nul")).toBeUndefined();
    });

    it("a counter hit the database refuses fails alone; the requests counted with it are counted", async () => {
      const now = 5_000_000;
      const results = await Promise.all(
        ["a", "b\u0000", "c", "a"].map((name) =>
          store.counters
            .hit([{ name, windowMs: 60_000 }], now)
            .then((r) => r[0]?.current)
            .catch((err: Error) => err.name),
        ),
      );
      expect(results).toEqual([1, "StoreRejectedError", 1, 2]);
    });

    it("batches that hit the same counters in different orders never wait on each other in a cycle (no deadlock)", async () => {
      // Each request names some of twelve shared counters in its own order; two batches are in flight
      // at once. Locked in arrival order, two batches could each hold a row the other wants next: a
      // deadlock, which verify's 20 ms statement timeout turns into degraded answers.
      const names = Array.from({ length: 12 }, (_, i) => `shared_${i}`);
      let seed = 7;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      const now = 9_000_000;
      for (let round = 0; round < 5; round++) {
        const requests = Array.from({ length: 300 }, () => [...names].sort(() => random() - 0.5).slice(0, 6));
        const pending: Promise<string | undefined>[] = [];
        for (const hit of requests) {
          pending.push(
            store.counters
              .hit(
                hit.map((name) => ({ name, windowMs: 60_000 })),
                now + round * 120_000,
              )
              .then(
                () => undefined,
                (err: Error) => err.message,
              ),
          );
          // One request a turn: small batches, two in flight, each locking its rows as it goes.
          await new Promise((r) => setImmediate(r));
        }
        const failures = (await Promise.all(pending)).filter((f) => f !== undefined);
        expect(failures).toEqual([]);
      }
    }, 60_000);
  });
}
