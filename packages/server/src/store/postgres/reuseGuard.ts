import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";

/** node-postgres's message when `query_timeout` gives up on a statement (client.js). */
const ABANDONED = "Query read timeout";
/** node-postgres's message for every statement in flight when the connection drops (client.js). */
const LOST = "Connection terminated unexpectedly";

/** Where an error from an abandoned statement names the backend that may still be running it. */
const BACKEND = Symbol("abandoned backend");

/**
 * The server process (backend pid) that ran the statement `err` abandoned, when `err` (or its cause)
 * is a statement given up on at query_timeout or lost with its connection: the client knows nothing
 * of its outcome, and a write among them may still commit. Undefined for any other error.
 */
export function abandonedBackend(err: unknown): number | undefined {
  for (let e = err; e instanceof Error; e = e.cause) {
    const pid = (e as Error & { [BACKEND]?: number })[BACKEND];
    if (pid !== undefined) return pid;
  }
  return undefined;
}

/**
 * Whether a connection handed back to the pool is fit for the next caller. It is not when:
 * - it is still inside a transaction (status T, or E for a failed one): a ROLLBACK that timed out
 *   in the client's queue is dropped from it unsent, so the next caller's single statements would run
 *   inside that transaction, be acknowledged, and vanish when it ends;
 * - one of its statements was abandoned on `query_timeout`: the statement may still be running (or
 *   not yet sent, like a BEGIN held by a stalled network), so the status read here is stale and
 *   everything queued behind it would wait on it.
 * Either way the pool destroys it and opens a fresh one.
 */
function fitForReuse(client: pg.PoolClient, abandoned: boolean): boolean {
  if (abandoned) return false;
  const status = client.getTransactionStatus();
  return status === null || status === "I";
}

/**
 * Kysely's view of a pg pool in which a connection goes back for reuse only when it is idle outside
 * any transaction (fitForReuse). Acknowledged means committed: without this, a statement
 * acknowledged on a connection left mid-transaction was lost when that transaction ended.
 */
export function reuseGuard(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let abandoned = false;
      const query = (sql: string, parameters: readonly unknown[]) => {
        const pending = client.query(sql, parameters as unknown[]);
        pending.then(undefined, (err: unknown) => {
          if (!(err instanceof Error) || (err.message !== ABANDONED && err.message !== LOST)) return;
          abandoned = true;
          // Set by node-postgres from the server's BackendKeyData; not in its type declarations.
          const pid = (client as unknown as { processID?: number | null }).processID;
          if (typeof pid === "number") Object.assign(err, { [BACKEND]: pid });
        });
        return pending;
      };
      return {
        // Kysely passes a cursor only for streamed reads, which Warden does not use.
        query: query as unknown as PostgresPoolClient["query"],
        release: () => {
          const fit = fitForReuse(client, abandoned);
          client.release(fit ? undefined : true);
        },
      };
    },
    end: () => pool.end(),
  };
}
