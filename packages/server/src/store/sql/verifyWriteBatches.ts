import { CompiledQuery, type Kysely } from "kysely";
import type { WriteSignal } from "../interfaces.js";
import type { Database } from "../schema.js";
import {
  byBucket,
  type CounterBucket,
  type CounterCount,
  hitCountersInOneStatement,
} from "./counterBuckets.js";
import { EVENT_COLUMN_TYPES, EVENT_COLUMNS, type hotStatements } from "./hotStatements.js";
import { abortError, refusesThisWrite } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";
import { type JobOutcome, WriteBatch } from "./writeBatch.js";

/** What the store writes for verify through batches, when the runtime batches (runtime.ts). */
export interface VerifyWriteBatches {
  /** One request's buckets (distinct names), counted with the other requests of its batch. */
  hitCounters(buckets: readonly CounterBucket[]): Promise<CounterCount[]>;
  /** Inserts the event while its API key is unrevoked; false when nothing was inserted. */
  insertEventIfKeyActive(row: Database["events"], signal: WriteSignal | undefined): Promise<boolean>;
}

type Hot = ReturnType<typeof hotStatements>;

/**
 * PostgreSQL's group commit for verify's two writes. Each batch is one statement over arrays
 * (unnest), the same text whatever the batch's size, so it is prepared once per connection. A batch
 * the database refuses for its data is retried job by job with the single-row statements, so that one
 * request's data can never fail another's write. Any other failure (a timeout, a lost connection)
 * fails the batch's jobs at once: retrying them would only double their wait.
 */
export function verifyWriteBatches(
  rt: SqlRuntime,
  hot: Hot,
  inFlight: { events: number; counters: number },
): VerifyWriteBatches {
  const counters = new WriteBatch<readonly CounterBucket[], CounterCount[]>({
    maxInFlight: inFlight.counters,
    maxJobs: 256,
    run: (jobs) =>
      rt.write(
        async (conn) => {
          try {
            return await hitCounterBatch(rt, conn, jobs);
          } catch (err) {
            if (!refusesThisWrite(err)) throw err;
            return Promise.all(
              jobs.map((job) => settle(() => hitCountersInOneStatement(rt, conn, hot, job))),
            );
          }
        },
        { early: true },
      ),
  });
  type EventJob = { row: Database["events"]; signal: WriteSignal | undefined };
  const events = new WriteBatch<EventJob, boolean>({
    maxInFlight: inFlight.events,
    maxJobs: 256,
    // The moment a write becomes irreversible (verify's WriteSignal): a verify past its deadline has
    // answered degraded, and its event must not be written behind that answer.
    admit: (job) => !job.signal || job.signal.commit(),
    dropped: abortError,
    run: (jobs) =>
      rt.write(async (conn) => {
        try {
          const inserted = await insertEventBatch(
            rt,
            conn,
            jobs.map((j) => j.row),
          );
          return jobs.map((j): JobOutcome<boolean> => ({ ok: true, value: inserted.has(j.row.id) }));
        } catch (err) {
          if (!refusesThisWrite(err)) throw err;
          return Promise.all(
            jobs.map((j) =>
              settle(async () => {
                const res = await rt.execute(conn, hot.insertEventIfKeyActive(j.row));
                return Number(res.numAffectedRows ?? 0) === 1;
              }),
            ),
          );
        }
      }),
  });
  return {
    hitCounters: (buckets) => counters.submit(buckets),
    insertEventIfKeyActive: (row, signal) => events.submit({ row, signal }),
  };
}

async function settle<R>(work: () => Promise<R>): Promise<JobOutcome<R>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error };
  }
}

const COUNTER_BATCH = `with v as (
  select * from unnest($1::bigint[], $2::text[], $3::integer[], $4::bigint[])
    as v(expires_at, name, n, previous_expires_at)
), up as (
  insert into counters (expires_at, name, count) select expires_at, name, n from v
  on conflict (expires_at, name) do update set count = counters.count + excluded.count
  returning counters.expires_at, counters.name, counters.count
)
select up.name, up.expires_at, up.count,
  (select p.count from counters p where p.name = v.name and p.expires_at = v.previous_expires_at) as previous
from up join v on v.name = up.name and v.expires_at = up.expires_at`;

/**
 * The batch's buckets in one upsert. Hits of several requests on one bucket (an API key's rate-limit
 * row) become one row counted n times: the statement returns the count after all n, and each request
 * gets the count as of its own hit, in the order the requests came.
 */
async function hitCounterBatch(
  rt: SqlRuntime,
  conn: Kysely<Database>,
  jobs: readonly (readonly CounterBucket[])[],
): Promise<JobOutcome<CounterCount[]>[]> {
  const merged = new Map<string, CounterBucket & { n: number }>();
  const seat = jobs.map((buckets) =>
    buckets.map((b) => {
      const key = `${b.expiresAt}|${b.name}`;
      const m = merged.get(key);
      if (m) return { key, nth: m.n++ };
      merged.set(key, { ...b, n: 1 });
      return { key, nth: 0 };
    }),
  );
  // In one order for every batch: two batches in flight that locked shared rows (a key's rate limit,
  // a network's counters) each in its own arrival order could each hold a row the other wants next,
  // a deadlock that verify's statement timeout ends first.
  const rows = [...merged.values()].sort(byBucket);
  const { rows: returned } = await rt.execute(
    conn,
    CompiledQuery.raw(COUNTER_BATCH, [
      rows.map((r) => r.expiresAt),
      rows.map((r) => r.name),
      rows.map((r) => r.n),
      rows.map((r) => r.previousExpiresAt),
    ]) as CompiledQuery<{ name: string; expires_at: number; count: number; previous: number | null }>,
  );
  const byKey = new Map(returned.map((r) => [`${Number(r.expires_at)}|${r.name}`, r]));
  return seat.map((places): JobOutcome<CounterCount[]> => {
    const counts: CounterCount[] = [];
    for (const { key, nth } of places) {
      const r = byKey.get(key);
      const m = merged.get(key);
      if (!r || !m) return { ok: false, error: new Error("counters.hit: a counter was not returned") };
      counts.push({
        count: Number(r.count) - m.n + 1 + nth,
        previous: r.previous === null ? null : Number(r.previous),
      });
    }
    return { ok: true, value: counts };
  });
}

const columnList = EVENT_COLUMNS.map((c) => `"${c}"`).join(", ");
const EVENT_BATCH = `insert into events (${columnList})
select ${EVENT_COLUMNS.map((c) => `v."${c}"`).join(", ")}
from unnest(${EVENT_COLUMNS.map((c, i) => `$${i + 1}::${EVENT_COLUMN_TYPES[c]}[]`).join(", ")}) as v(${columnList})
where exists (select 1 from api_keys k where k.id = v.key_id and k.revoked_at is null)
on conflict do nothing
returning id`;

/** The batch's events in one insert, each only while its API key is unrevoked; the ids inserted. */
async function insertEventBatch(
  rt: SqlRuntime,
  conn: Kysely<Database>,
  rows: readonly Database["events"][],
): Promise<Set<string>> {
  const { rows: inserted } = await rt.execute(
    conn,
    CompiledQuery.raw(
      EVENT_BATCH,
      EVENT_COLUMNS.map((c) => rows.map((r) => r[c])),
    ) as CompiledQuery<{ id: string }>,
  );
  return new Set(inserted.map((r) => r.id));
}
