import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";
import { testEvent } from "../../testing/harness.js";
import { postgresDatabaseOrSkip } from "../../testing/postgres.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * WARDEN_PG_READ_URL: the console's long reads (aggregates, event lists, ledger totals) go to another
 * server, a streaming replica in production; everything verify, challenge and feedback read stays on
 * the primary. Here the "replica" is a second database holding other rows, so where each read went
 * shows in what it answers.
 */
const SUITE = "console reads on a PostgreSQL read replica";
const primaryUrl = await postgresDatabaseOrSkip(SUITE, "the read-replica test (primary)");
const replicaUrl = primaryUrl && (await postgresDatabaseOrSkip(SUITE, "the read-replica test (replica)"));

if (primaryUrl && replicaUrl) {
  const options = { statementTimeoutMs: 2000, poolSize: 2, poolMin: 0 };
  let replica: Store;
  let store: Store;
  const scope = { since: 0, until: 10_000 };
  beforeAll(async () => {
    replica = await openPostgresStore({ url: replicaUrl, ...options });
    store = await openPostgresStore({ url: primaryUrl, readUrl: replicaUrl, ...options });
    for (const s of [replica, store])
      await s.tenants.create({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
    await store.events.record(testEvent("evt_on_primary", { createdAt: 2000 }), undefined);
    await replica.events.record(testEvent("evt_on_replica", { createdAt: 3000 }), undefined);
  });
  afterAll(async () => {
    await store?.close();
    await replica?.close();
  });

  describe(SUITE, () => {
    it("lists and counts from the read URL's server", async () => {
      const listed = await store.insights.listEvents("t1", scope, 10);
      expect(listed.map((e) => e.id)).toEqual(["evt_on_replica"]);
      const counts = await store.insights.decisionCounts("t1", scope, "hour");
      expect(counts.reduce((n, c) => n + c.count, 0)).toBe(1);
    });

    it("reads what verify, challenge and feedback need from the primary", async () => {
      expect((await store.events.get("t1", "evt_on_primary"))?.id).toBe("evt_on_primary");
      expect(await store.events.get("t1", "evt_on_replica")).toBeUndefined();
    });
  });
}
