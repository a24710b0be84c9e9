import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultProxy } from "../../testing/faultProxy.js";
import { postgresDatabaseOrSkip } from "../../testing/postgres.js";
import type { Store } from "../interfaces.js";
import { openPostgresStore } from "./postgresStore.js";
import { reuseGuard } from "./reuseGuard.js";

/**
 * Acknowledged means committed: a connection that timed out or failed inside a transaction is
 * destroyed, never handed to the next caller. Each case puts the timeout inside a transaction on
 * purpose (a stalled network, a statement that outlives query_timeout), then makes one acknowledged
 * single-statement write on the same one-connection pool, closes the pool, and looks for the write
 * from another connection. Without the guard the write ran inside the abandoned transaction and
 * vanished with it.
 */
const SUITE = "PostgreSQL connections left inside a transaction";
const databaseUrl = await postgresDatabaseOrSkip(SUITE, "the acknowledged-means-committed test");

if (databaseUrl) {
  const url = new URL(databaseUrl);
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query("create table if not exists acknowledged (id text primary key)");
  });
  afterAll(async () => {
    await admin?.end();
  });

  const committed = async (table: string, column: string, id: string): Promise<boolean> =>
    (await admin.query(`select 1 from ${table} where ${column} = $1`, [id])).rowCount === 1;

  describe(SUITE, () => {
    it("a BEGIN held by a stalled network: the next acknowledged write on the pool is committed", async () => {
      const proxy = await new FaultProxy(url.hostname, Number(url.port || 5432)).start();
      const viaProxy = new URL(databaseUrl);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      let store: Store | undefined = await openPostgresStore({
        url: viaProxy.toString(),
        statementTimeoutMs: 150,
        poolSize: 1,
        poolMin: 1,
      });
      try {
        await store.tenants.get("nobody"); // the pool's one connection is open
        proxy.set("stall");
        // A write transaction whose BEGIN never reaches the server in time: the client gives up on it.
        await expect(store.policies.put("t-held", "{}", Date.now())).rejects.toThrow();
        proxy.set("pass"); // the held BEGIN now reaches the server
        await new Promise((r) => setTimeout(r, 50));
        const created = await store.tenants.create({
          id: "t-acknowledged",
          rawPii: false,
          logOnly: false,
          createdAt: Date.now(),
        });
        expect(created).toBe(true);
        await store.close();
        store = undefined;
        expect(await committed("tenants", "id", "t-acknowledged")).toBe(true);
      } finally {
        await store?.close();
        await proxy.stop();
      }
    });

    it("a statement and its ROLLBACK both past query_timeout: the connection is rolled back or destroyed, never reused inside it", async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, query_timeout: 150 });
      pool.on("error", () => undefined);
      const db = new Kysely<{ acknowledged: { id: string } }>({
        dialect: new PostgresDialect({ pool: reuseGuard(pool) }),
      });
      try {
        await expect(
          db.transaction().execute(async (trx) => {
            await sql`select 1`.execute(trx);
            // Outlives query_timeout, and so does the ROLLBACK queued behind it.
            await sql`select pg_sleep(0.6)`.execute(trx);
          }),
        ).rejects.toThrow(/timeout/);
        await db.insertInto("acknowledged").values({ id: "after-rollback-timeout" }).execute();
      } finally {
        await db.destroy();
      }
      expect(await committed("acknowledged", "id", "after-rollback-timeout")).toBe(true);
    });

    it("a connection slower to open than a caller's wait is kept for the next caller, not discarded and opened again", async () => {
      const proxy = await new FaultProxy(url.hostname, Number(url.port || 5432)).start();
      const viaProxy = new URL(databaseUrl);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      const store = await openPostgresStore({
        url: viaProxy.toString(),
        statementTimeoutMs: 40,
        poolSize: 1,
        poolMin: 0,
      });
      try {
        // Opening a connection now takes two delayed round trips, far past a caller's 50 ms wait.
        proxy.delayMs = 150;
        proxy.set("slow");
        const before = proxy.accepted;
        for (let i = 0; i < 5; i++) {
          await expect(
            store.idempotency.find({ tenantId: "t", operation: "verify", key: "k" }, 0),
          ).rejects.toThrow();
        }
        // Before: each call opened a connection and pg-pool ended it at the call's wait (5 openings,
        // each a server process started for nothing). Now: one opening, under way for them all.
        expect(proxy.accepted - before).toBe(1);
        proxy.set("pass");
        let found: unknown = "unanswered";
        for (let i = 0; i < 50 && found === "unanswered"; i++) {
          found = await store.idempotency
            .find({ tenantId: "t", operation: "verify", key: "k" }, 0)
            .catch(() => "unanswered");
          if (found === "unanswered") await new Promise((r) => setTimeout(r, 100));
        }
        expect(found).toBeUndefined();
        // The connection opened for the callers who gave up serves this one.
        expect(proxy.accepted - before).toBe(1);
      } finally {
        await store.close();
        await proxy.stop();
      }
    });

    it("a connection whose statement was abandoned at query_timeout is reused once the statement ends, not replaced", async () => {
      const proxy = await new FaultProxy(url.hostname, Number(url.port || 5432)).start();
      const viaProxy = new URL(databaseUrl);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      const store = await openPostgresStore({
        url: viaProxy.toString(),
        statementTimeoutMs: 100,
        poolSize: 1,
        poolMin: 0,
      });
      const find = (key: string) => store.idempotency.find({ tenantId: "t", operation: "verify", key }, 0);
      try {
        expect(await find("warm")).toBeUndefined(); // the pool's one connection is open
        const before = proxy.accepted;
        proxy.delayMs = 300;
        proxy.on("late-reply-marker", "late replies");
        // Its answer comes 300 ms late: the client gives up at 125 ms, the statement ends all the same.
        await expect(find("late-reply-marker")).rejects.toThrow(/timeout/);
        proxy.set("pass");
        let found: unknown = "unanswered";
        for (let i = 0; i < 50 && found === "unanswered"; i++) {
          found = await find("after").catch(() => "unanswered");
          if (found === "unanswered") await new Promise((r) => setTimeout(r, 100));
        }
        expect(found).toBeUndefined();
        // Before, the connection was destroyed at the timeout and another opened in its place.
        expect(proxy.accepted - before).toBe(0);
      } finally {
        await store.close();
        await proxy.stop();
      }
    });

    it("a statement that failed inside a transaction is rolled back and its connection reused idle", async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      const db = new Kysely<{ acknowledged: { id: string } }>({
        dialect: new PostgresDialect({ pool: reuseGuard(pool) }),
      });
      const backend = async (conn: Kysely<{ acknowledged: { id: string } }>) =>
        (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn)).rows[0]?.pid;
      try {
        let inTransaction: number | undefined;
        await expect(
          db.transaction().execute(async (trx) => {
            inTransaction = await backend(trx);
            await trx.insertInto("acknowledged").values({ id: "rolled-back" }).execute();
            await sql`select 1/0`.execute(trx);
          }),
        ).rejects.toThrow(/division by zero/);
        await db.insertInto("acknowledged").values({ id: "after-failure" }).execute();
        expect(await backend(db)).toBe(inTransaction);
      } finally {
        await db.destroy();
      }
      expect(await committed("acknowledged", "id", "rolled-back")).toBe(false);
      expect(await committed("acknowledged", "id", "after-failure")).toBe(true);
    });
  });
}
