import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";

/** node-postgres's message when `query_timeout` gives up on a statement (client.js). */
const ABANDONED = "Query read timeout";

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
          if (err instanceof Error && err.message === ABANDONED) abandoned = true;
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
