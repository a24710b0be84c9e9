import { type CompiledQuery, type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";
import { abandonedBackend } from "./reuseGuard.js";

export interface SettleOptions {
  /** Behind a transaction pooler the pid a connection knows is the pooler's, not a server process's. */
  behindPooler: boolean;
  /**
   * How long the server process may take to exit once ended. A COMMIT waiting for its WAL flush
   * finishes before the process exits, and a flush can take seconds on a disk that other work keeps
   * busy: until the process is gone the write's outcome is not known.
   */
  patienceMs: number;
  /** One pg_terminate_backend call's wait; it is called again until the process is gone or patience ends. */
  stepMs: number;
}

/**
 * What a write whose connection gave up on it left behind (SqlRuntime.keptDespite). The client
 * stopped waiting, but the server process may still be running the statement, or a COMMIT the
 * network has not delivered yet: it is ended first, then the write's row is read. Concurrent writes
 * abandoned on one connection (a batch) end it once.
 *
 * `db` is a pool of its own whose statement timeout outlasts one step (postgresStore.ts, "settle").
 */
export function abandonedWrites(
  db: Kysely<Database>,
  opts: SettleOptions,
): (err: unknown, kept: CompiledQuery<unknown>) => Promise<boolean> {
  const ending = new Map<number, Promise<boolean>>();
  const ended = (pid: number): Promise<boolean> => {
    let pending = ending.get(pid);
    if (!pending) {
      pending = endBackend(db, pid, opts).finally(() => ending.delete(pid));
      ending.set(pid, pending);
    }
    return pending;
  };
  return async (err, kept) => {
    const pid = abandonedBackend(err);
    if (pid === undefined || opts.behindPooler) return false;
    try {
      if (!(await ended(pid))) return false;
      return (await db.executeQuery(kept)).rows.length > 0;
    } catch {
      return false;
    }
  };
}

/**
 * Ends server process `pid` if it is still running as this role, and resolves once it has exited
 * (true) or is gone already; false when it outlived `patienceMs`. PostgreSQL 14's
 * pg_terminate_backend with a timeout waits for the exit, and answers false (with a warning) when
 * its wait ends first: the process is still there, so it is asked again.
 */
async function endBackend(db: Kysely<Database>, pid: number, opts: SettleOptions): Promise<boolean> {
  const until = performance.now() + opts.patienceMs;
  for (;;) {
    const wait = Math.max(1, Math.min(opts.stepMs, Math.ceil(until - performance.now())));
    const { rows } = await sql<{ ended: boolean }>`
      select pg_terminate_backend(pid, ${wait}::bigint) as ended
      from pg_stat_activity where pid = ${pid}::int and usename = current_user`.execute(db);
    if (rows.length === 0 || rows[0]?.ended === true) return true;
    if (performance.now() >= until) return false;
  }
}
