import pg from "pg";
import { describe, expect, it } from "vitest";
import { housekeep } from "../../housekeeping.js";
import { bearer, makeTestApp } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import type { Store } from "../interfaces.js";
import { PARTITIONS_AHEAD, WEEK_MS, weeklyPartitionName, weekStart } from "./eventPartitions.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * Roles as production runs them: the owner migrates with `--runtime-role` (openPostgresStore's
 * runtimeRole), and the service runs as that role with `--no-migrate` (migrate: false), a role that
 * may not create, alter or drop a table. Over the ten weeks after the migration's, on a moved clock (past the weeks the
 * migration made ahead) each week's housekeeping pass makes the coming weeks' partitions through the
 * owner's function, and verify scores every week, its events in that week's partition.
 */
const SUITE = "the runtime role over weeks";
const schema = await postgresSchemaOrSkip(SUITE, "the runtime-role suite");

if (schema) {
  describe(SUITE, () => {
    it("`serve --no-migrate` as the runtime role scores week after week, its partitions made without DDL rights", async () => {
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      const role = `warden_rt_${schema.slice(-8)}`;
      const options = { statementTimeoutMs: 5000, poolSize: 2, schema };
      let owner: Store | undefined;
      let t: Awaited<ReturnType<typeof makeTestApp>> | undefined;
      try {
        await admin.query(`create role ${role} login`);
        owner = await openPostgresStore({ url: TEST_POSTGRES_URL, runtimeRole: role, ...options });
        const asRole = new URL(TEST_POSTGRES_URL);
        asRole.username = role;
        const runtime = await openPostgresStore({ url: asRole.toString(), migrate: false, ...options });
        const { rows: rights } = await admin.query(
          "select has_schema_privilege($1, $2, 'CREATE') as creates, has_database_privilege($1, current_database(), 'CREATE') as schemas",
          [role, schema],
        );
        expect(rights[0]).toEqual({ creates: false, schemas: false });

        const start = Date.now();
        let now = start;
        t = await makeTestApp({ store: runtime, clock: () => now, env: { WARDEN_STORE_TIMEOUT_MS: "2000" } });
        const tenant = await t.tenant("acme");
        const { apiKey } = await t.key(tenant, { scopes: ["verify:write"] });
        const attached = async () =>
          (
            await admin.query(
              "select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = $1::regclass",
              [`${schema}.events`],
            )
          ).rows.map((r) => r.relname as string);

        // The migration's first weekly partition is next week's (this week's events go to events_before).
        for (let week = 1; week <= 10; week++) {
          now = start + week * WEEK_MS;
          await housekeep(t.deps);
          const partitions = await attached();
          for (let ahead = 0; ahead <= PARTITIONS_AHEAD; ahead++) {
            expect(partitions, `week ${week}`).toContain(
              weeklyPartitionName(weekStart(now) + ahead * WEEK_MS),
            );
          }
          for (let i = 0; i < 3; i++) {
            const res = await t.app.inject({
              method: "POST",
              url: "/v1/verify",
              headers: bearer(apiKey),
              payload: { action: "signup", subject: { ipTrunc: "203.0.113.0/24" } },
            });
            expect({ week, status: res.statusCode, degraded: res.json().degraded }).toEqual({
              week,
              status: 200,
              degraded: false,
            });
          }
          const { rows } = await admin.query(
            `select count(*)::int as n from ${schema}.${weeklyPartitionName(weekStart(now))}`,
          );
          expect(rows[0].n, `week ${week}'s events`).toBe(3);
        }
      } finally {
        await t?.close();
        await owner?.close();
        await admin.query(`drop owned by ${role}`).catch(() => undefined);
        await admin.query(`drop role if exists ${role}`);
        await admin.end();
      }
    });
  });
}
