import { CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDatabaseOrSkip } from "../../testing/postgres.js";
import type { ReadMeter } from "../interfaces.js";
import type { Database } from "../schema.js";
import { openPostgresStore } from "./postgresStore.js";
import { READ_SLOT_LOCK_CLASS, ReadSlots } from "./readSlots.js";

/**
 * The console's long reads on PostgreSQL take read slots of the database they read (readSlots.ts):
 * however many processes read it, at most so many of their statements run at once, each slot rests
 * after a read, and one API key's reads go one at a time. Each "process" here is a pool of its own
 * with two connections, as a Warden process's read pool has. A database of its own: the slots are
 * advisory locks, shared by every schema of a database.
 */
const SUITE = "console read slots on PostgreSQL";
const url = await postgresDatabaseOrSkip(SUITE, "the read-slot test");

if (url) {
  const pools: Kysely<Database>[] = [];
  const readPool = () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // An idle connection ended by the server (another suite's cleanup of the shared database) is not
    // this test's failure: the pool replaces it on the next read.
    pool.on("error", () => undefined);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    pools.push(db);
    return db;
  };
  let observer: pg.Client;
  beforeAll(async () => {
    observer = new pg.Client({ connectionString: url });
    observer.on("error", () => undefined);
    await observer.connect();
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.destroy()));
    await observer?.end();
  });

  /** A read that takes `seconds` in the database, named so pg_stat_activity tells it apart. */
  const sleeping = (name: string, seconds: number) =>
    CompiledQuery.raw(`select '${name}' as name, pg_sleep(${seconds})`) as CompiledQuery<{ name: string }>;
  /** The reads of `like` running now (not waiting for a slot). */
  const running = async (like: string) =>
    (
      await observer.query<{ query: string }>(
        "select query from pg_stat_activity where datname = current_database() and state = 'active' " +
          "and wait_event is distinct from 'advisory' and query like $1 and pid <> pg_backend_pid()",
        [`select '${like}%`],
      )
    ).rows.map((r) => r.query);
  /** Backends waiting for an advisory lock (a read waiting for its slot). */
  const waiting = async () =>
    Number(
      (
        await observer.query<{ n: string }>(
          "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event = 'advisory'",
        )
      ).rows[0]?.n,
    );
  const until = async (what: () => Promise<boolean>) => {
    for (let i = 0; i < 500 && !(await what()); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await what()).toBe(true);
  };
  const slotFree = async (slot: number) => {
    const { rows } = await observer.query<{ got: boolean }>(
      "select pg_try_advisory_lock($1::int, $2::int) as got",
      [READ_SLOT_LOCK_CLASS, slot],
    );
    if (rows[0]?.got)
      await observer.query("select pg_advisory_unlock($1::int, $2::int)", [READ_SLOT_LOCK_CLASS, slot]);
    return rows[0]?.got === true;
  };

  describe(SUITE, () => {
    it("two processes' reads never run more than the slots at once; the rest wait and then run", async () => {
      const settings = { slots: 2, share: 100, timeoutMs: 10_000 };
      const processes = [new ReadSlots(settings), new ReadSlots(settings)].map((slots) => ({
        slots,
        db: readPool(),
      }));
      const reads = Array.from({ length: 6 }, (_, i) => {
        const p = processes[i % 2] as (typeof processes)[number];
        return p.slots.run(p.db, sleeping(`slotted ${i}`, 0.15));
      });
      let done = false;
      const all = Promise.all(reads).finally(() => {
        done = true;
      });
      let most = 0;
      let sawWaiting = false;
      while (!done) {
        most = Math.max(most, (await running("slotted")).length);
        sawWaiting ||= (await waiting()) > 0;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect((await all).map((rows) => rows[0]?.name)).toEqual(
        Array.from({ length: 6 }, (_, i) => `slotted ${i}`),
      );
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(2);
      expect(sawWaiting).toBe(true);
    });

    it("a read waits for a taken slot and runs once it is freed, a lost connection freeing it too", async () => {
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      holder.on("error", () => undefined);
      await holder.query("select pg_advisory_lock($1::int, 0)", [READ_SLOT_LOCK_CLASS]);
      const slots = new ReadSlots({ slots: 1, share: 100, timeoutMs: 10_000 });
      const read = slots.run(readPool(), sleeping("after the holder", 0));
      await until(async () => (await waiting()) === 1);
      // The holder's connection is lost: its slot goes with it.
      const pid = (holder as unknown as { processID: number }).processID;
      await observer.query("select pg_terminate_backend($1)", [pid]);
      expect((await read)[0]?.name).toBe("after the holder");
      await holder.end().catch(() => undefined);
    });

    it("a slot rests after a read, taken and idle, and close cuts the rest short", async () => {
      const slots = new ReadSlots({ slots: 1, share: 10, timeoutMs: 60_000 });
      const db = readPool();
      await slots.run(db, sleeping("before a rest", 0.2));
      // Answered; its slot stays taken for nine times the read's time.
      expect(await slotFree(0)).toBe(false);
      slots.close();
      await until(() => slotFree(0));
    });

    it("one key's reads go one at a time and leave the process's other connection to another key", async () => {
      const slots = new ReadSlots({ slots: 2, share: 100, timeoutMs: 10_000 });
      const db = readPool();
      const meter = (holder: string): ReadMeter => Object.assign(() => undefined, { holder });
      const order: string[] = [];
      const ofK = [0, 1, 2].map((i) =>
        slots.run(db, sleeping(`key k ${i}`, 0.1), meter("k")).then(() => order.push(`k${i}`)),
      );
      const ofJ = slots.run(db, sleeping("key j", 0), meter("j")).then(() => order.push("j"));
      let most = 0;
      let done = false;
      const all = Promise.all([...ofK, ofJ]).finally(() => {
        done = true;
      });
      while (!done) {
        most = Math.max(most, (await running("key k")).length);
        await new Promise((r) => setTimeout(r, 5));
      }
      await all;
      expect(most).toBe(1);
      expect(order.indexOf("j")).toBeLessThan(order.indexOf("k2"));
      expect(order.filter((o) => o.startsWith("k"))).toEqual(["k0", "k1", "k2"]);
    });

    it("a key's read whose turn does not come within the timeout fails; the key's next one still waits its turn", async () => {
      await observer.query("select pg_advisory_lock($1::int, 0)", [READ_SLOT_LOCK_CLASS]);
      const slots = new ReadSlots({ slots: 1, share: 100, timeoutMs: 1000 });
      const db = readPool();
      const meter: ReadMeter = Object.assign(() => undefined, { holder: "k" });
      const first = slots.run(db, sleeping("first of k", 0), meter);
      await until(async () => (await waiting()) === 1);
      await expect(slots.run(db, sleeping("second of k", 0), meter)).rejects.toThrow(/earlier reads/);
      const third = slots.run(db, sleeping("third of k", 0), meter);
      await observer.query("select pg_advisory_unlock($1::int, 0)", [READ_SLOT_LOCK_CLASS]);
      expect((await first)[0]?.name).toBe("first of k");
      expect((await third)[0]?.name).toBe("third of k");
    });

    it("charges the read's statement, not its wait for a slot", async () => {
      await observer.query("select pg_advisory_lock($1::int, 0)", [READ_SLOT_LOCK_CLASS]);
      const slots = new ReadSlots({ slots: 1, share: 100, timeoutMs: 10_000 });
      let charged = 0;
      const read = slots.run(readPool(), sleeping("charged", 0), (ms: number) => {
        charged += ms;
      });
      await until(async () => (await waiting()) === 1);
      // The read waits for the slot through all of `held` (it waited before, and until the unlock).
      const holding = performance.now();
      await new Promise((r) => setTimeout(r, 500));
      const held = performance.now() - holding;
      await observer.query("select pg_advisory_unlock($1::int, 0)", [READ_SLOT_LOCK_CLASS]);
      await read;
      expect(charged).toBeGreaterThan(0);
      // A charge that counted the wait would be at least `held`: the same run's two figures, no threshold.
      expect(charged, `charged ${charged} ms, the slot held ${held} ms`).toBeLessThan(held);
    });

    it("the store's console reads of two processes wait for the database's one slot", async () => {
      const options = {
        url,
        statementTimeoutMs: 2000,
        poolSize: 2,
        poolMin: 0,
        readConcurrency: 1,
        readShare: 100,
      };
      const [a, b] = [await openPostgresStore(options), await openPostgresStore(options)];
      try {
        await a.tenants.create({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
        await observer.query("select pg_advisory_lock($1::int, 0)", [READ_SLOT_LOCK_CLASS]);
        const reads = [
          a.insights.decisionCounts("t1", { since: 0, until: 10_000 }, "hour"),
          b.insights.listEvents("t1", { since: 0, until: 10_000 }, 10),
        ];
        await until(async () => (await waiting()) === 2);
        await observer.query("select pg_advisory_unlock($1::int, 0)", [READ_SLOT_LOCK_CLASS]);
        expect(await Promise.all(reads)).toEqual([[], []]);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });
}
