import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEvent } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import type { Store } from "../interfaces.js";
import { NamedStatements } from "./namedStatements.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * The hot statements run as named prepared statements (parsed and planned once per connection), and
 * the store works the same with them turned off (WARDEN_PG_PREPARED_STATEMENTS=false, for a pooler
 * that does not keep prepared statements).
 */
const SUITE = "PostgreSQL named hot statements";
const schema = await postgresSchemaOrSkip(SUITE, "the named-statement tests");

if (schema) {
  describe(SUITE, () => {
    it("runs a registered text as its named statement, once prepared per connection; other texts stay unnamed", async () => {
      const named = new NamedStatements();
      const hot = "select $1::int + 1 as n";
      named.register(hot);
      named.register(hot);
      const Client = named.clientClass();
      const client = new Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        expect((await client.query(hot, [1])).rows).toEqual([{ n: 2 }]);
        expect((await client.query(hot, [41])).rows).toEqual([{ n: 42 }]);
        expect((await client.query("select $1::int + 2 as n", [1])).rows).toEqual([{ n: 3 }]);
        const { rows } = await client.query<{ name: string; statement: string }>(
          "select name, statement from pg_prepared_statements order by name",
        );
        expect(rows).toEqual([{ name: named.nameOf(hot), statement: hot }]);
      } finally {
        await client.end();
      }
    });

    it("names a statement by its text: two processes that met their statements in another order agree", () => {
      const [a, b] = ["select 1 as one", "select 2 as two"];
      const first = new NamedStatements();
      first.register(a);
      first.register(b);
      const second = new NamedStatements();
      second.register(b);
      second.register(a);
      expect(first.nameOf(a)).toBe(second.nameOf(a));
      expect(first.nameOf(b)).toBe(second.nameOf(b));
      expect(first.nameOf(a)).not.toBe(first.nameOf(b));
      expect(first.nameOf(a)).toMatch(/^warden_[0-9a-f]{24}$/);
    });

    for (const preparedStatements of [true, false]) {
      describe(`with preparedStatements ${preparedStatements}`, () => {
        let store: Store;
        const tenant = `t_${preparedStatements}`;
        beforeAll(async () => {
          store = await openPostgresStore({
            url: TEST_POSTGRES_URL,
            schema,
            statementTimeoutMs: 2000,
            poolSize: 2,
            preparedStatements,
            applicationName: `warden_named_${preparedStatements}`,
          });
          await store.tenants.create({ id: tenant, rawPii: false, logOnly: false, createdAt: Date.now() });
        });
        afterAll(async () => {
          await store?.close();
        });

        it("counts, records events and reads them back, the same statement many times over", async () => {
          const now = Date.now();
          for (let i = 1; i <= 8; i++) {
            const [reading] = await store.counters.hit(
              [{ name: `named:${preparedStatements}`, windowMs: 60_000 }],
              now,
            );
            expect(reading?.current).toBe(i);
            const id = `evt_named_${preparedStatements}_${i}`;
            expect(await store.events.record(testEvent(id, { tenantId: tenant }), undefined)).toEqual({
              kind: "recorded",
            });
            expect((await store.events.get(tenant, id))?.id).toBe(id);
          }
        });

        it("prepares again on a connection that replaced one the server ended", async () => {
          const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
          await admin.connect();
          try {
            const ended = await admin.query(
              "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
              [`warden_named_${preparedStatements}`],
            );
            expect(ended.rowCount).toBeGreaterThan(0);
          } finally {
            await admin.end();
          }
          const id = `evt_named_after_${preparedStatements}`;
          let outcome: unknown;
          // The first statements on the ended connections fail; the pool replaces them.
          for (let i = 0; i < 10 && outcome === undefined; i++) {
            outcome = await store.events
              .record(testEvent(id, { tenantId: tenant }), undefined)
              .catch(() => undefined);
          }
          expect(outcome).toEqual({ kind: "recorded" });
          expect((await store.events.get(tenant, id))?.id).toBe(id);
        });
      });
    }
  });
}
