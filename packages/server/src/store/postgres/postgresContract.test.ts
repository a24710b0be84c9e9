import pg from "pg";
import { describe, expect, it } from "vitest";
import { attemptContract } from "../../testing/contract/attempts.js";
import { campaignContract } from "../../testing/contract/campaigns.js";
import { eventSearchContract } from "../../testing/contract/eventSearch.js";
import { feedbackResolutionContract } from "../../testing/contract/feedbackResolutions.js";
import { insightContract } from "../../testing/contract/insights.js";
import { removalContract } from "../../testing/contract/removal.js";
import { storeContract } from "../../testing/contract/store.js";
import { testEvent } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { StoreRejectedError } from "../interfaces.js";
import { openPostgresStore } from "./postgresStore.js";

const schema = await postgresSchemaOrSkip("store contract: postgres", "the PostgreSQL store contract suite");
if (schema) {
  const open = () =>
    openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 5000, poolSize: 8, poolMin: 2, schema });
  // Two stores = two connection pools, as two Warden processes would have.
  storeContract("postgres", open, open);
  // Its own tenants (i1, i2) in the same schema: the store contract's tenants never show in its reads.
  insightContract("postgres", open);
  // Its own tenants (c1, c2).
  campaignContract("postgres", open);
  // Its own tenants (q1, q2).
  eventSearchContract("postgres", open);
  // Its own tenants (r1, r2); resolutions race on two pools.
  feedbackResolutionContract("postgres", open, open);
  attemptContract("postgres", open);
  // A schema of its own: retention reads every tenant, and the suites above leave old events behind.
  const removalSchema = await postgresSchemaOrSkip(
    "event removal contract: postgres",
    "retention and erasure",
  );
  if (removalSchema) {
    const openRemoval = () =>
      openPostgresStore({
        url: TEST_POSTGRES_URL,
        statementTimeoutMs: 5000,
        poolSize: 8,
        poolMin: 2,
        schema: removalSchema,
      });
    // Two pools: writers on events being erased race with the erasure as two processes would.
    removalContract("postgres", openRemoval, openRemoval);
  }

  describe("postgres refusals", () => {
    it("a value PostgreSQL cannot store (a NUL byte) is a StoreRejectedError: retrying cannot succeed", async () => {
      const store = await open();
      try {
        await expect(
          store.events.record(testEvent("evt_nul", { action: "sign\u0000up" }), undefined),
        ).rejects.toBeInstanceOf(StoreRejectedError);
        await expect(store.events.record(testEvent("evt_ok"), undefined)).resolves.toEqual({
          kind: "recorded",
        });
      } finally {
        await store.close();
      }
    });
  });

  describe("postgres connection pool", () => {
    it("warmUp opens the pool's minimum of connections, for requests and for counters", async () => {
      const applicationName = `warden-${schema}`;
      const store = await openPostgresStore({
        url: TEST_POSTGRES_URL,
        statementTimeoutMs: 5000,
        poolSize: 8,
        poolMin: 3,
        schema,
        applicationName,
      });
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      const open = async () =>
        Number(
          (
            await admin.query("select count(*) as n from pg_stat_activity where application_name = $1", [
              applicationName,
            ])
          ).rows[0].n,
        );
      try {
        expect(await open()).toBe(0);
        await store.warmUp();
        // Three request connections and three of the counters' pool (its size is half the pool's: 4).
        expect(await open()).toBe(6);
      } finally {
        await store.close();
        await admin.end();
      }
    });
  });
}
