import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * Migrations find their own bookkeeping: with Kysely's migration tables present in another schema of
 * the same database (another Warden, or any Kysely application), a Warden in a fresh schema still
 * creates and takes its own lock. Before, it saw the other schema's tables, skipped creating its own
 * and failed with "relation kysely_migration_lock does not exist".
 */
const SUITE = "migrations beside another schema's Kysely tables";
const first = await postgresSchemaOrSkip(SUITE, "the migration-schema test");

if (first) {
  const second = `warden_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${second}`);
  afterAll(async () => {
    await admin.query(`drop schema ${second} cascade`);
    await admin.end();
  });

  describe(SUITE, () => {
    it("a second schema migrates while the first keeps its migration tables", async () => {
      const open = (schema: string) =>
        openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 2000, poolSize: 2, schema });
      await (await open(first)).close();
      const store = await open(second);
      try {
        expect(await store.tenants.count()).toBe(0);
      } finally {
        await store.close();
      }
      const { rows } = await admin.query(
        "select table_schema from information_schema.tables where table_name = 'kysely_migration_lock' and table_schema = any($1)",
        [[first, second]],
      );
      expect(rows.map((r) => r.table_schema).sort()).toEqual([first, second].sort());
    });

    it("a schema another client drops while Warden looks for its migration tables does not fail the start", async () => {
      // Kysely's look asks has_schema_privilege(name) of every schema it read: one dropped between the
      // two was 3F000 "schema … does not exist" (twice in three runs of the whole suite).
      const churn = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await churn.connect();
      let churning = true;
      const churned = (async () => {
        for (let i = 0; churning; i++) {
          await churn.query(`create schema ${second}_churn_${i}`);
          await churn.query(`drop schema ${second}_churn_${i}`);
        }
      })();
      try {
        for (let i = 0; i < 8; i++) {
          const schema = `${second}_open_${i}`;
          await admin.query(`create schema ${schema}`);
          try {
            const store = await openPostgresStore({
              url: TEST_POSTGRES_URL,
              statementTimeoutMs: 2000,
              poolSize: 2,
              schema,
            });
            await store.close();
          } finally {
            await admin.query(`drop schema ${schema} cascade`);
          }
        }
      } finally {
        churning = false;
        await churned;
        await churn.end();
      }
    });
  });
}
