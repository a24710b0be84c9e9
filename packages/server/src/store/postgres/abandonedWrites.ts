import { type CompiledQuery, type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";
import { abandonedBackend } from "./reuseGuard.js";

/**
 * What a write whose connection gave up on it left behind (SqlRuntime.keptDespite). The client
 * stopped waiting, but the server process may still be running the statement, or a COMMIT the
 * network has not delivered yet: it is ended first, then the write's row is read. Concurrent writes
 * abandoned on one connection (a batch) end it once.
 *
 * `db` is a pool of its own whose statement timeout outlasts the wait (postgresStore.ts, "settle").
 */
export function abandonedWrites(
  db: Kysely<Database>,
  opts: { behindPooler: boolean; waitMs: number },
): (err: unknown, kept: CompiledQuery<unknown>) => Promise<boolean> {
  const ending = new Map<number, Promise<boolean>>();
  const ended = (pid: number): Promise<boolean> => {
    let pending = ending.get(pid);
    if (!pending) {
      pending = endBackend(db, pid, opts.waitMs).finally(() => ending.delete(pid));
      ending.set(pid, pending);
    }
    return pending;
  };
  return async (err, kept) => {
    const pid = abandonedBackend(err);
    // Behind a pooler the pid is the pooler's, not a server process's.
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
 * (true) or when it is gone already; false when it outlived `waitMs` (PostgreSQL 14's
 * pg_terminate_backend with a timeout waits for the exit).
 */
async function endBackend(db: Kysely<Database>, pid: number, waitMs: number): Promise<boolean> {
  const { rows } = await sql<{ ended: boolean }>`
    select pg_terminate_backend(pid, ${waitMs}::bigint) as ended
    from pg_stat_activity where pid = ${pid}::int and usename = current_user`.execute(db);
  return rows.length === 0 || rows[0]?.ended === true;
}
