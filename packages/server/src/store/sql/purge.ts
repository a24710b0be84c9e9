import type { Kysely } from "kysely";
import type { Database } from "../schema.js";
import type { SqlRuntime } from "./runtime.js";

/** Rows deleted per write: a few hundred microseconds of SQLite's (synchronous) time each. */
export const PURGE_CHUNK = 1000;

/** What stops a removal between two of its chunks: an AbortSignal, or several read as one. */
export type StopSignal = Pick<AbortSignal, "aborted">;

/**
 * Deletes rows in chunks, each its own write, and lets other work run between them. One DELETE of a
 * minute's expired counters held SQLite's event loop for hundreds of milliseconds at production rates
 * (300,000 rows: 156 ms on this project's machines), long enough for every verify in flight to miss
 * its deadline; in chunks the housekeeping interleaves with requests.
 *
 * `deleteChunk` deletes at most `limit` rows and resolves how many it deleted (fewer: the last
 * chunk). With `transaction`, each chunk is one write transaction (several statements, all or
 * nothing). With `rest`, it waits `rest` times as long as a chunk took before the next, so a long
 * purge takes at most 1 / (1 + rest) of the time (SQLite: of the thread verify runs on). With `signal`
 * aborted, it stops between chunks.
 */
export async function purgeInChunks(
  rt: SqlRuntime,
  deleteChunk: (conn: Kysely<Database>, limit: number) => Promise<number>,
  options: { chunk?: number; transaction?: boolean; rest?: number; signal?: StopSignal | undefined } = {},
): Promise<number> {
  const chunk = options.chunk ?? PURGE_CHUNK;
  const run = (conn: Kysely<Database>) => deleteChunk(conn, chunk);
  let total = 0;
  for (;;) {
    if (options.signal?.aborted) return total;
    const started = performance.now();
    const deleted = await (options.transaction ? rt.writeTransaction(run) : rt.write(run));
    total += deleted;
    if (deleted < chunk) return total;
    await restAfter(started, options.rest ?? 0);
  }
}

/**
 * After a step of housekeeping that began at `started` (performance.now()), rests `rest` times as
 * long as it took, so that the work takes at most 1 / (1 + rest) of the time; at least a turn of the
 * event loop.
 */
export function restAfter(started: number, rest: number): Promise<void> {
  const ms = rest > 0 ? (performance.now() - started) * rest : 0;
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}

export function deleteExpiredCounters(conn: Kysely<Database>, now: number, limit: number): Promise<number> {
  return conn
    .deleteFrom("counters")
    .where((eb) =>
      eb(
        eb.refTuple("expires_at", "name"),
        "in",
        eb
          .selectFrom("counters")
          .select(["expires_at", "name"])
          .where("expires_at", "<=", now)
          .limit(limit)
          .$asTuple("expires_at", "name"),
      ),
    )
    .executeTakeFirst()
    .then((res) => Number(res.numDeletedRows));
}

export function deleteExpiredIdempotency(
  conn: Kysely<Database>,
  now: number,
  limit: number,
): Promise<number> {
  return conn
    .deleteFrom("idempotency")
    .where((eb) =>
      eb(
        eb.refTuple("tenant_id", "operation", "key"),
        "in",
        eb
          .selectFrom("idempotency")
          .select(["tenant_id", "operation", "key"])
          .where("expires_at", "<=", now)
          .limit(limit)
          .$asTuple("tenant_id", "operation", "key"),
      ),
    )
    .executeTakeFirst()
    .then((res) => Number(res.numDeletedRows));
}
