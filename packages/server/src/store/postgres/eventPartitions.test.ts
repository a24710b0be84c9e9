import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removalFixtures } from "../../testing/contract/removal.js";
import { testEvent } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import type { Store } from "../interfaces.js";
import { migrateToLatest, migrateUpTo } from "../migrations.js";
import type { Database } from "../schema.js";
import { eventToRow } from "../sql/rows.js";
import {
  DROPPING_COMMENT,
  listEventPartitions,
  PARTITIONS_AHEAD,
  WEEK_MS,
  weeklyPartitionName,
  weekStart,
} from "./eventPartitions.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * Events on PostgreSQL live in weekly partitions (docs/deployment.md, "Partitions"): the coming weeks'
 * exist ahead of time, and retention drops a week whose every tenant is past its retention, with
 * everything that hangs off its events.
 */
const SUITE = "event partitions: postgres";
const schema = await postgresSchemaOrSkip(SUITE, "the PostgreSQL partition tests");

if (schema) {
  const open = () =>
    openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 5000, poolSize: 4, poolMin: 1, schema });
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  let a: Store;
  let b: Store;
  beforeAll(async () => {
    await admin.connect();
    a = await open();
    b = await open();
    for (const id of ["w1", "w2", "w3", "w4", "w5"])
      await a.tenants.create({ id, rawPii: false, logOnly: false, createdAt: 1 });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await admin.end();
  });

  /** The partitions attached to events, by name. */
  const attached = async (): Promise<string[]> =>
    (
      await admin.query<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = $1::regclass order by 1`,
        [`${schema}.events`],
      )
    ).rows.map((r) => r.name);
  const tableExists = async (name: string): Promise<boolean> =>
    (await admin.query("select to_regclass($1) as t", [`${schema}.${name}`])).rows[0].t !== null;

  const f = removalFixtures({ a: () => a, b: () => b });
  const now = Date.now();
  const thisWeek = weekStart(now);
  /** Weeks ahead of now that exist from the start: each test takes its own. */
  const week = (n: number) => thisWeek + n * WEEK_MS;
  const cutoffsOf =
    (cutoffs: Record<string, number | undefined>) =>
    async (tenantId: string): Promise<number | undefined> =>
      cutoffs[tenantId];

  describe(SUITE, () => {
    it("a new database has a partition for the weeks before it and the coming weeks'; partitionsAhead makes what is missing once, across processes", async () => {
      const names = await attached();
      expect(names).toContain("events_before");
      // events_before takes this week's events: the weekly partitions start with the next.
      for (let n = 1; n <= PARTITIONS_AHEAD; n++) expect(names).toContain(weeklyPartitionName(week(n)));
      expect(await a.removal.partitionsAhead(now)).toEqual([]);

      const later = now + 3 * WEEK_MS;
      const [first, second] = await Promise.all([
        a.removal.partitionsAhead(later),
        b.removal.partitionsAhead(later),
      ]);
      const expected = [1, 2, 3].map((n) => weeklyPartitionName(week(PARTITIONS_AHEAD + n)));
      expect([...first, ...second].sort()).toEqual(expected);
      expect(await attached()).toEqual(expect.arrayContaining(expected));
      // A week's partition takes events (and keeps one row per id).
      const e = testEvent("evt_far", { tenantId: "w3", createdAt: week(PARTITIONS_AHEAD + 3) + 5 });
      expect(await a.events.record(e, undefined)).toEqual({ kind: "recorded" });
      expect(await a.events.record(e, undefined)).toEqual({ kind: "recorded" });
      expect(await b.events.get("w3", "evt_far")).toEqual(e);
      expect(
        (await admin.query(`select count(*)::int as n from ${schema}.events where id = 'evt_far'`)).rows[0].n,
      ).toBe(1);
    });

    it("a degraded event's keyed id is one event, even when its expired idempotency key is claimed again a week later", async () => {
      await a.removal.partitionsAhead(week(8) - (PARTITIONS_AHEAD - 1) * WEEK_MS);
      const first = testEvent("evt_keyed", { tenantId: "w3", degraded: true, createdAt: week(7) + 10 });
      const key = { tenantId: "w3", operation: "verify", key: "k-keyed" };
      const answer = { fingerprint: "f", statusCode: 200, body: { eventId: first.id } };
      expect(await a.events.record(first, { ...key, response: answer, expiresAt: week(7) + 20 })).toEqual({
        kind: "recorded",
      });
      const again = { ...first, createdAt: week(8) + 10 };
      for (const activeKey of [true, false]) {
        await b.events.record(again, { ...key, response: answer, expiresAt: week(8) + 20 }, undefined, {
          activeKey,
        });
      }
      expect(
        (await admin.query(`select created_at from ${schema}.events where id = 'evt_keyed'`)).rows.map((r) =>
          Number(r.created_at),
        ),
      ).toEqual([first.createdAt]);
      // Copies written at once by two processes, with no claim (a spool restored, a superseded answer).
      for (let i = 0; i < 20; i++) {
        const copy = (at: number) => ({ ...first, id: `evt_keyed_race_${i}`, createdAt: at });
        await Promise.all([
          a.events.record(copy(week(7) + 100 + i), undefined),
          b.events.record(copy(week(8) + 100 + i), undefined),
        ]);
      }
      const { rows: copies } = await admin.query(
        `select id, count(*)::int as n from ${schema}.events where id like 'evt_keyed_race_%' group by id`,
      );
      expect(copies).toHaveLength(20);
      expect(copies.every((r) => r.n === 1)).toBe(true);
    });
    it("retention drops a week whose every tenant is past its retention, with what hangs off its events and the attempts' other events in the next week", async () => {
      const w = week(2);
      await f.fullAttempt("wk1", "w1", w + 1_000);
      await f.fullAttempt("wk2", "w2", w + 2_000);
      // The re-verify lands in the next week.
      const { reverify } = await f.fullAttempt("edge", "w1", w + WEEK_MS - 10);
      expect(reverify.createdAt).toBeGreaterThanOrEqual(w + WEEK_MS);
      const keep = f.event("evt_wk_keep", "w1", w + WEEK_MS + 100);
      await a.events.record(keep, undefined);
      expect(await f.traces("w1", "wk1")).toEqual(f.whole);
      const cutoffs = cutoffsOf({ w1: w + WEEK_MS, w2: w + WEEK_MS + 1, w3: undefined });

      // Past the end of WARDEN_RETENTION_HOURS no week's drop begins, and nothing goes row by row.
      const ended = AbortSignal.abort();
      expect((await a.removal.olderThan(cutoffs, undefined, ended)).events).toBe(0);
      expect(await attached()).toContain(weeklyPartitionName(w));
      expect(await f.traces("w1", "wk1")).toEqual(f.whole);

      const removed = await a.removal.olderThan(cutoffs);
      expect(removed).toEqual({
        events: 6,
        challenges: 3,
        clears: 3,
        observations: 9,
        resolutions: 3,
        idempotentAnswers: 6,
      });
      expect(await attached()).not.toContain(weeklyPartitionName(w));
      expect(await tableExists(weeklyPartitionName(w))).toBe(false);
      for (const [tenant, tag] of [
        ["w1", "wk1"],
        ["w2", "wk2"],
        ["w1", "edge"],
      ] as const)
        expect(await f.traces(tenant, tag)).toEqual(f.gone);
      expect(await b.events.get("w1", keep.id)).toEqual(keep);
      // The ledger counts what is kept only: no observation outlives its event.
      expect(await b.feedback.aggregate("w1", {})).toEqual([]);
      // w3's events (weeks ahead) keep theirs; the pass made none missing that it needs.
      expect(await b.events.get("w3", "evt_far")).toBeDefined();
    });

    it("a tenant whose retention keeps one of a week's events keeps the week; the other tenants' events in it go row by row", async () => {
      const w = week(4);
      await f.fullAttempt("kp1", "w1", w + 1_000);
      await f.fullAttempt("kp2", "w2", w + 2_000);
      const removed = await a.removal.olderThan(cutoffsOf({ w1: w + WEEK_MS, w2: w + 1_000, w3: undefined }));
      // w1's attempt, and evt_wk_keep (week 3, dropped whole: w1 is its only tenant).
      expect(removed).toMatchObject({ events: 3, challenges: 1, clears: 1, observations: 3 });
      expect(await attached()).not.toContain(weeklyPartitionName(week(3)));
      expect(await attached()).toContain(weeklyPartitionName(w));
      expect(await f.traces("w1", "kp1")).toEqual(f.gone);
      expect(await f.traces("w2", "kp2")).toEqual(f.whole);
    });

    it("no week is dropped while no tenant has a cutoff, nor one that ends past the earliest cutoff, even empty", async () => {
      const before = await attached();
      expect(await a.removal.olderThan(cutoffsOf({}))).toMatchObject({ events: 0 });
      expect(await a.removal.olderThan(cutoffsOf({ w1: week(7), w2: week(1) }))).toMatchObject({
        events: 0,
      });
      expect(await attached()).toEqual(before);
    });

    it("a drop cut short after its detach is finished by the next pass: what hangs off the detached events goes, then the table", async () => {
      const w = week(5);
      const name = weeklyPartitionName(w);
      await f.fullAttempt("cut", "w2", w + 3_000);
      // As a drop leaves it: marked, then detached.
      await admin.query(`comment on table ${schema}.${name} is '${DROPPING_COMMENT}'`);
      await admin.query(`alter table ${schema}.events detach partition ${schema}.${name}`);
      expect(await b.events.get("w2", "evt_cut")).toBeUndefined();
      // Every tenant keeps its events: only the detached table is finished, past the end of
      // WARDEN_RETENTION_HOURS too (a drop that outlasted its window would otherwise never end).
      const removed = await a.removal.olderThan(cutoffsOf({}), undefined, AbortSignal.abort());
      expect(removed).toEqual(f.oneAttempt);
      expect(await tableExists(name)).toBe(false);
      expect(await f.traces("w2", "cut")).toEqual(f.gone);
      // The week is made again by the next pass that looks ahead.
      expect(await a.removal.partitionsAhead(now)).toContain(name);
    });

    it("a week's drop waits for a reader of that week without holding verify's writes, and a DETACH cut short is finalized by the next pass", async () => {
      const w = week(6);
      const name = weeklyPartitionName(w);
      await f.fullAttempt("wait", "w4", w + 1_000);
      const cutoffs = cutoffsOf({
        w1: w + WEEK_MS,
        w2: w + WEEK_MS,
        w3: w + WEEK_MS,
        w4: w + WEEK_MS,
        w5: w + WEEK_MS,
      });
      // A transaction that has read the week: DETACH … CONCURRENTLY waits for it to end.
      const reader = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await reader.connect();
      try {
        await reader.query("begin");
        await reader.query(`select count(*) from ${schema}.${name}`);
        const pass = a.removal.olderThan(cutoffs);
        await new Promise((resolve) => setTimeout(resolve, 300));
        // A plain DETACH would queue every insert into events behind its lock until the reader ends.
        const during = f.event("evt_during_drop", "w5", week(8) + 7);
        const recorded = await Promise.race([
          b.events.record(during, undefined).then((r) => r.kind),
          new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000)),
        ]);
        expect(recorded).toBe("recorded");
        expect(await attached()).toContain(name);
        await reader.query("commit");
        expect((await pass).events).toBeGreaterThanOrEqual(2);
        expect(await tableExists(name)).toBe(false);
        expect(await f.traces("w4", "wait")).toEqual(f.gone);

        // The same wait cut short by a timeout leaves the week detaching; the next pass finalizes it.
        const v = week(9);
        const cut = weeklyPartitionName(v);
        await f.fullAttempt("fin", "w4", v + 1_000);
        await reader.query("begin");
        await reader.query(`select count(*) from ${schema}.${cut}`);
        const ddl = new pg.Client({ connectionString: TEST_POSTGRES_URL });
        await ddl.connect();
        await ddl.query(`comment on table ${schema}.${cut} is '${DROPPING_COMMENT}'`);
        await ddl.query("set statement_timeout = 500");
        await expect(
          ddl.query(`alter table ${schema}.events detach partition ${schema}.${cut} concurrently`),
        ).rejects.toThrow();
        await ddl.end();
        await reader.query("commit");
        const { rows } = await admin.query(
          "select inhdetachpending as pending from pg_inherits where inhrelid = $1::regclass",
          [`${schema}.${cut}`],
        );
        expect(rows[0]?.pending).toBe(true);
        expect((await a.removal.olderThan(cutoffsOf({}))).events).toBeGreaterThanOrEqual(2);
        expect(await tableExists(cut)).toBe(false);
        expect(await f.traces("w4", "fin")).toEqual(f.gone);
      } finally {
        await reader.end();
      }
    });

    it("a table out of events that no drop of Warden's marked is left alone, whatever its name", async () => {
      const other = weeklyPartitionName(week(40));
      await admin.query(`create table ${schema}.${other} (like ${schema}.events including all)`);
      await admin.query(`create table ${schema}.${other}_copy (like ${schema}.events including all)`);
      await admin.query(
        `insert into ${schema}.${other} select * from ${schema}.events where tenant_id = 'w5'`,
      );
      expect(await a.removal.olderThan(cutoffsOf({}))).toMatchObject({ events: 0 });
      expect(await tableExists(other)).toBe(true);
      expect(await tableExists(`${other}_copy`)).toBe(true);
      expect(await b.events.get("w5", "evt_during_drop")).toBeDefined();
    });

    it("a week that cannot be dropped leaves its events to the row-by-row removal, and the pass says why", async () => {
      const w = week(PARTITIONS_AHEAD + 2);
      await f.fullAttempt("nodrop", "w5", w + 1_000);
      // With a default partition, PostgreSQL refuses DETACH … CONCURRENTLY.
      await admin.query(`create table ${schema}.events_default partition of ${schema}.events default`);
      try {
        const cutoffs = cutoffsOf({
          w1: w + WEEK_MS,
          w2: w + WEEK_MS,
          w3: w + WEEK_MS,
          w4: w + WEEK_MS,
          w5: w + WEEK_MS,
        });
        await expect(a.removal.olderThan(cutoffs)).rejects.toThrow(
          /dropping a week of events failed.*removed row by row/,
        );
        expect(await f.traces("w5", "nodrop")).toEqual(f.gone);
      } finally {
        await admin.query(`drop table ${schema}.events_default`);
      }
    });
  });
}

const upgradeSchema = await postgresSchemaOrSkip(
  "event partitions: upgrading a database with events",
  "the PostgreSQL partition upgrade test",
);
if (upgradeSchema) {
  describe("event partitions: upgrading a database with events", () => {
    it("migration 0015 keeps every event the table held, reads and writes them as before, and makes the weeks after the newest one", async () => {
      const pool = new pg.Pool({
        connectionString: TEST_POSTGRES_URL,
        options: `-c search_path=${upgradeSchema}`,
      });
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
      try {
        await migrateUpTo(db, "postgres", "0014_idempotency_event");
        const now = Date.now();
        // One from long ago, one now, one a week and a half ahead (a fast clock).
        const times = [86_400_000, now, now + 10 * 86_400_000];
        const rows = times.map((createdAt, i) =>
          eventToRow(testEvent(`evt_up_${i}`, { tenantId: "u1", createdAt })),
        );
        await (db as unknown as Kysely<Database>).insertInto("events").values(rows).execute();
        await migrateToLatest(db, "postgres");

        const store = await openPostgresStore({
          url: TEST_POSTGRES_URL,
          statementTimeoutMs: 5000,
          poolSize: 2,
          schema: upgradeSchema,
        });
        try {
          await store.tenants.create({ id: "u1", rawPii: false, logOnly: false, createdAt: 1 });
          for (const [i, createdAt] of times.entries())
            expect(await store.events.get("u1", `evt_up_${i}`)).toMatchObject({ createdAt });
          const { rows: held } = await sql<{ id: string }>`select id from events_before order by id`.execute(
            db,
          );
          expect(held.map((r) => r.id)).toEqual(["evt_up_0", "evt_up_1", "evt_up_2"]);
          // The weekly partitions start after the newest event's week.
          const next = weekStart(times[2] ?? 0) + WEEK_MS;
          const partitions = (await listEventPartitions(db)).map((p) => p.name);
          expect(partitions[0]).toBe("events_before");
          expect(partitions[1]).toBe(weeklyPartitionName(next));
          const later = testEvent("evt_up_next", { tenantId: "u1", createdAt: next + 1 });
          expect(await store.events.record(later, undefined)).toEqual({ kind: "recorded" });
          expect(await store.events.get("u1", later.id)).toEqual(later);
          // A retry of an event already held is still a write that counts, and no second row.
          const again = testEvent("evt_up_1", { tenantId: "u1", createdAt: now });
          expect(await store.events.record(again, undefined)).toEqual({ kind: "recorded" });
          const { rows: count } = await sql<{ n: number }>`select count(*)::int as n from events`.execute(db);
          expect(count[0]?.n).toBe(4);
        } finally {
          await store.close();
        }
      } finally {
        await db.destroy();
      }
    });
  });
}

const roleSchema = await postgresSchemaOrSkip(
  "event partitions: a runtime role",
  "the PostgreSQL partition tests with a runtime role",
);
if (roleSchema) {
  describe("event partitions: a runtime role", () => {
    it("a role that does not own events removes them row by row and makes no partition; it says so once the next weeks lack theirs", async () => {
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      const role = `warden_rt_${roleSchema.slice(-8)}`;
      const options = { statementTimeoutMs: 5000, poolSize: 2, schema: roleSchema };
      const owner = await openPostgresStore({ url: TEST_POSTGRES_URL, ...options });
      let runtime: Store | undefined;
      try {
        await owner.tenants.create({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
        await admin.query(`create role ${role} login`);
        await admin.query(`grant usage on schema ${roleSchema} to ${role}`);
        await admin.query(
          `grant select, insert, update, delete on all tables in schema ${roleSchema} to ${role}`,
        );
        const url = new URL(TEST_POSTGRES_URL);
        url.username = role;
        const opened = await openPostgresStore({ url: url.toString(), migrate: false, ...options });
        runtime = opened;
        const f = removalFixtures({ a: () => opened, b: () => opened });
        const now = Date.now();
        const week = (n: number) => weekStart(now) + n * WEEK_MS;
        await f.fullAttempt("rt", "t1", week(2) + 1_000);

        expect(await runtime.removal.olderThan(week(3))).toMatchObject({
          events: 2,
          challenges: 1,
          observations: 3,
        });
        expect(await f.traces("t1", "rt")).toEqual(f.gone);
        const attached = async () =>
          (
            await admin.query(
              `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = $1::regclass`,
              [`${roleSchema}.events`],
            )
          ).rows.map((r) => r.relname);
        expect(await attached()).toContain(weeklyPartitionName(week(2)));
        expect(await runtime.removal.partitionsAhead(now)).toEqual([]);

        // The far weeks gone: quiet while the next three weeks have theirs, then an error naming the fix.
        const drop = async (n: number) => {
          const name = `${roleSchema}.${weeklyPartitionName(week(n))}`;
          await admin.query(`alter table ${roleSchema}.events detach partition ${name}`);
          await admin.query(`drop table ${name}`);
        };
        for (const n of [4, 5, 6]) await drop(n);
        expect(await runtime.removal.partitionsAhead(now)).toEqual([]);
        await drop(2);
        await expect(runtime.removal.partitionsAhead(now)).rejects.toThrow(/warden migrate/);
        // The owner makes them.
        expect((await owner.removal.partitionsAhead(now)).length).toBeGreaterThanOrEqual(4);
      } finally {
        await runtime?.close();
        await owner.close();
        await admin.query(`drop owned by ${role}`).catch(() => undefined);
        await admin.query(`drop role if exists ${role}`);
        await admin.end();
      }
    });
  });
}
