import { type CompiledQuery, type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";
import { abandonedBackend, abandonedDrained } from "./reuseGuard.js";

export interface SettleOptions {
  /** Behind a transaction pooler the pid a connection knows is the pooler's, not a server process's. */
  behindPooler: boolean;
  /**
   * How long a server process may take to exit once ended. A COMMIT waiting for its WAL flush
   * finishes before the process exits, and a flush can take seconds on a disk that other work keeps
   * busy: until the process is gone the write's outcome is not known.
   */
  patienceMs: number;
  /** How often the processes being ended are looked for again. */
  pollMs: number;
}

interface Ending {
  since: number;
  /** The process's backend_start when first seen: a later process given the same pid is not it. */
  started?: string;
  resolve(gone: boolean): void;
}

/**
 * What a write whose connection gave up on it left behind (SqlRuntime.keptDespite). The client
 * stopped waiting, but the server process may still be running the statement, or a COMMIT the
 * network has not delivered yet. When the statement has since ended on its connection (reuseGuard.ts
 * drains it: the server answered it, and the connection is idle outside a transaction), the write's
 * row is read at once; otherwise the process is ended first, then the row is read.
 *
 * Every process being ended at once is handled by one loop on `db` (a pool of one connection,
 * postgresStore.ts "settle"): each turn reads which of them are still there in one statement, ends
 * the new ones in another, and looks again `pollMs` later. A disk stall that abandons every
 * connection's COMMIT at once then costs one statement per turn, not one wait per process in a queue
 * for the one connection. Concurrent writes abandoned on one connection (a batch) share its process.
 */
export function abandonedWrites(
  db: Kysely<Database>,
  opts: SettleOptions,
): (err: unknown, kept: CompiledQuery<unknown>) => Promise<boolean> {
  const ending = new Map<number, { ending: Ending; gone: Promise<boolean> }>();
  let looping = false;

  const settleAll = (gone: boolean) => {
    for (const { ending: e } of ending.values()) e.resolve(gone);
    ending.clear();
  };
  const loop = async () => {
    looping = true;
    try {
      while (ending.size > 0) {
        const pids = [...ending.keys()];
        const { rows } = await sql<{ pid: number; started: string }>`
          select pid, backend_start::text as started from pg_stat_activity
          where pid = any(${pids}::int[]) and usename = current_user`.execute(db);
        const present = new Map(rows.map((r) => [r.pid, r.started]));
        const fresh: number[] = [];
        const now = performance.now();
        // Only the processes this look asked about: one that joined meanwhile is looked for next turn.
        for (const pid of pids) {
          const e = ending.get(pid)?.ending;
          if (!e) continue;
          const started = present.get(pid);
          if (started === undefined || (e.started !== undefined && started !== e.started)) {
            e.resolve(true);
            ending.delete(pid);
          } else if (e.started === undefined) {
            e.started = started;
            fresh.push(pid);
          } else if (now - e.since > opts.patienceMs) {
            e.resolve(false);
            ending.delete(pid);
          }
        }
        if (fresh.length > 0) {
          await sql`select pg_terminate_backend(pid) from pg_stat_activity
            where pid = any(${fresh}::int[]) and usename = current_user`.execute(db);
        }
        if (ending.size > 0) await new Promise((r) => setTimeout(r, opts.pollMs));
      }
    } catch {
      // The database does not answer: the outcomes cannot be known.
      settleAll(false);
    } finally {
      looping = false;
    }
  };
  const ended = (pid: number): Promise<boolean> => {
    const known = ending.get(pid);
    if (known) return known.gone;
    let resolve!: (gone: boolean) => void;
    const gone = new Promise<boolean>((r) => {
      resolve = r;
    });
    ending.set(pid, { ending: { since: performance.now(), resolve }, gone });
    if (!looping) void loop();
    return gone;
  };

  return async (err, kept) => {
    const pid = abandonedBackend(err);
    if (pid === undefined || opts.behindPooler) return false;
    try {
      // Most often the statement ends on its own (the server's statement timeout) and its connection
      // drains (reuseGuard.ts): nothing it sent can commit any more, and no process need be ended,
      // nor a connection opened again in its place.
      if (!(await abandonedDrained(err)) && !(await ended(pid))) return false;
      return (await db.executeQuery(kept)).rows.length > 0;
    } catch {
      return false;
    }
  };
}
