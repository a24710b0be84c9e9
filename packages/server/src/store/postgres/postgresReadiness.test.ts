import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../../testing/harness.js";
import { postgresDatabaseOrSkip } from "../../testing/postgres.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * GET /readyz/store on PostgreSQL answers 503 while the database takes reads but refuses writes (a server
 * put in read-only mode, or a standby after a failover), and 200 once writes are accepted again.
 */
const SUITE = "readiness on a read-only PostgreSQL";
const databaseUrl = await postgresDatabaseOrSkip(SUITE, "the read-only PostgreSQL readiness test");

if (databaseUrl) {
  const database = new URL(databaseUrl).pathname.slice(1);
  let admin: pg.Client;
  let t: TestApp;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    t = await makeTestApp({
      store: await openPostgresStore({ url: databaseUrl, statementTimeoutMs: 2000, poolSize: 2, poolMin: 1 }),
    });
  });
  afterAll(async () => {
    await t?.close();
    await admin?.end();
  });

  /** Sets the database's read-only default and ends the pool's sessions, so it reconnects under it. */
  async function readOnly(on: boolean): Promise<void> {
    await admin.query(
      `alter database ${database} ${on ? "set default_transaction_read_only = on" : "reset default_transaction_read_only"}`,
    );
    await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
      [database],
    );
  }
  /** Retries a read until the pool has replaced the sessions that were ended. */
  async function readsWork(): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        await t.store.tenants.get("nobody");
        await t.store.tenants.get("nobody");
        return;
      } catch (err) {
        if (i === 20) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  /** /readyz until it answers `status` (the first calls after the sessions ended may fail alike). */
  async function readyzBecomes(status: number): Promise<unknown> {
    let last: { statusCode: number; json(): unknown } | undefined;
    for (let i = 0; i < 20; i++) {
      last = await t.app.inject({ method: "GET", url: "/readyz/store" });
      if (last.statusCode === status) return last.json();
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`/readyz stayed ${last?.statusCode}`);
  }

  describe(SUITE, () => {
    it("is 503 while PostgreSQL refuses writes though reads still work, and 200 once it takes them again", async () => {
      expect(await readyzBecomes(200)).toMatchObject({ ok: true, store: "up" });
      await readOnly(true);
      try {
        // Reads work once the pool has reconnected: a read probe would answer 200 from here on.
        await readsWork();
        for (let i = 0; i < 3; i++) {
          const res = await t.app.inject({ method: "GET", url: "/readyz/store" });
          expect({ status: res.statusCode, body: res.json() }).toMatchObject({
            status: 503,
            body: { ok: false, store: "down" },
          });
        }
        expect(await t.store.tenants.get("nobody")).toBeUndefined();
      } finally {
        await readOnly(false);
      }
      expect(await readyzBecomes(200)).toMatchObject({ ok: true, store: "up" });
    });
  });
}
