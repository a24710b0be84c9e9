import type { Kysely } from "kysely";
import type { CounterHit, CounterReading } from "../interfaces.js";
import type { Database } from "../schema.js";
import type { hotStatements } from "./hotStatements.js";
import type { SqlRuntime } from "./runtime.js";

/*
 * Counter hits on SQL: a request's hits as bucket rows, counted in one statement (SQLite, and a
 * refused PostgreSQL batch's retry) or with the other requests of a batch (verifyWriteBatches.ts).
 */

/** One counter bucket a verify hits: the row's name, its expiry, and its previous bucket's expiry. */
export interface CounterBucket {
  name: string;
  expiresAt: number;
  previousExpiresAt: number;
}

/** A bucket's count after the hit (this hit included) and its previous bucket's count. */
export interface CounterCount {
  count: number;
  previous: number | null;
}

/**
 * All of a request's counters, counted at once. A counter's row is named with its window width, so
 * one name can be counted over several windows; a bucket's row lives until the end of the next
 * bucket, the last moment it is read as "previous". A counter named twice in one call is one row
 * (one statement cannot upsert a row twice on PostgreSQL): it is hit once and both readings are
 * that hit's (the CounterStore contract).
 */
export async function hitCounters(
  hits: readonly CounterHit[],
  now: number,
  count: (buckets: CounterBucket[]) => Promise<CounterCount[]>,
): Promise<CounterReading[]> {
  const buckets = new Map<string, CounterBucket>();
  const names = hits.map((h) => {
    const name = `${h.name}|${h.windowMs}`;
    if (!buckets.has(name)) {
      const bucket = Math.floor(now / h.windowMs);
      buckets.set(name, {
        name,
        expiresAt: (bucket + 2) * h.windowMs,
        previousExpiresAt: (bucket + 1) * h.windowMs,
      });
    }
    return name;
  });
  const unique = [...buckets.values()];
  const counts = await count(unique);
  const byName = new Map(unique.map((b, i) => [b.name, counts[i]]));
  return hits.map((h, i) => {
    const c = byName.get(names[i] as string);
    if (!c) throw new Error("counters.hit: a counter was not returned");
    return {
      current: c.count,
      previous: c.previous ?? 0,
      elapsed: (now - Math.floor(now / h.windowMs) * h.windowMs) / h.windowMs,
    };
  });
}

/**
 * The order every statement takes counter rows in (their primary key's): concurrent statements that
 * upsert shared rows then wait for one another in a line, never in a cycle (a deadlock).
 */
export const byBucket = (a: CounterBucket, b: CounterBucket): number =>
  a.expiresAt - b.expiresAt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** One request's buckets in one statement (SQLite's way, and a refused batch's retry). */
export async function hitCountersInOneStatement(
  rt: SqlRuntime,
  conn: Kysely<Database>,
  hot: ReturnType<typeof hotStatements>,
  buckets: readonly CounterBucket[],
): Promise<CounterCount[]> {
  const values: Record<string, unknown> = {};
  [...buckets].sort(byBucket).forEach((b, i) => {
    values[`name${i}`] = b.name;
    values[`expiresAt${i}`] = b.expiresAt;
    values[`previousExpiresAt${i}`] = b.previousExpiresAt;
  });
  const { rows } = await rt.execute(conn, hot.hitCounters(buckets.length)(values));
  const byName = new Map(
    (rows as { name: string; count: number; previous: number | null }[]).map((r) => [r.name, r]),
  );
  return buckets.map((b) => {
    const r = byName.get(b.name);
    if (!r) throw new Error("counters.hit: a counter was not returned");
    return { count: Number(r.count), previous: r.previous === null ? null : Number(r.previous) };
  });
}
