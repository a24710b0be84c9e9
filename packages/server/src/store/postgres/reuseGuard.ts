import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";

/** node-postgres's message when `query_timeout` gives up on a statement (client.js). */
const ABANDONED = "Query read timeout";
/** node-postgres's message for every statement in flight when the connection drops (client.js). */
const LOST = "Connection terminated unexpectedly";
/** pg-pool's message when a caller's wait for a connection runs out; kept for what matches on it. */
const NO_CONNECTION = "timeout exceeded when trying to connect";

/** Where an error from an abandoned statement names the backend that may still be running it. */
const BACKEND = Symbol("abandoned backend");
/** Where it holds whether the statement has since ended on its connection (drained). */
const DRAINED = Symbol("abandoned statement drained");

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
 * Whether the statement `err` abandoned has ended since, on the connection that sent it: true once
 * the server answered it and everything before it (its ReadyForQuery came back, so nothing it sent
 * can still commit) and the connection was left idle outside any transaction; false when that did not
 * happen within the drain timeout, or the connection was lost, and it was destroyed instead (the
 * statement may still run: abandonedWrites.ts ends its server process). Undefined for an error that
 * abandoned nothing.
 */
export function abandonedDrained(err: unknown): Promise<boolean> | undefined {
  for (let e = err; e instanceof Error; e = e.cause) {
    const drained = (e as Error & { [DRAINED]?: Promise<boolean> })[DRAINED];
    if (drained !== undefined) return drained;
  }
  return undefined;
}

/**
 * Whether a connection handed back to the pool is fit for the next caller as it is. It is not when:
 * - it is still inside a transaction (status T, or E for a failed one): a ROLLBACK that timed out
 *   in the client's queue is dropped from it unsent, so the next caller's single statements would run
 *   inside that transaction, be acknowledged, and vanish when it ends;
 * - one of its statements was abandoned on `query_timeout`: the statement may still be running (or
 *   not yet sent, like a BEGIN held by a stalled network), so the status read here is stale and
 *   everything queued behind it would wait on it.
 * Such a connection is drained first (drain), and destroyed when it cannot be.
 */
function fitForReuse(client: pg.PoolClient, abandoned: boolean): boolean {
  if (abandoned) return false;
  const status = client.getTransactionStatus();
  return status === null || status === "I";
}

export interface GuardOptions {
  /**
   * How long a caller waits for a connection, idle or being opened, before its call fails like a
   * slow statement. The pool's own connectionTimeoutMillis bounds only the opening: a connection
   * under way is not discarded because the caller that asked for it stopped waiting (each opening
   * costs the server a process start, milliseconds of its CPU), it goes to the next caller. Default:
   * the pool's connectionTimeoutMillis.
   */
  acquireTimeoutMs?: number;
  /**
   * How long an abandoned statement may take to end on its connection (the server's statement
   * timeout ends most within milliseconds) before the connection is destroyed instead of reused.
   * Default 1,000 ms.
   */
  drainTimeoutMs?: number;
}

const DEFAULT_DRAIN_TIMEOUT_MS = 1_000;

interface Waiter {
  resolve(client: pg.PoolClient): void;
  reject(err: Error): void;
  /** Gave up (its acquire timeout) or served: a connection arriving for it goes to the next waiter. */
  done: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Kysely's view of a pg pool in which a connection goes back for reuse only when it is idle outside
 * any transaction (fitForReuse). Acknowledged means committed: without this, a statement
 * acknowledged on a connection left mid-transaction was lost when that transaction ended.
 *
 * Under a slow database it does not make the database slower:
 * - a caller waits for a connection at most `acquireTimeoutMs`, while the connection it caused to be
 *   opened finishes opening and serves the next caller. pg-pool ends an opening at the caller's
 *   timeout: on a machine where opening took longer than verify's 50 ms, every request opened a
 *   connection and discarded it, and no connection was ever ready (pg_stat_database counted 30
 *   sessions a second, each a server process start, and the server's CPU went to them);
 * - a connection whose statement was abandoned at query_timeout is kept aside until that statement
 *   has ended (a statement queued behind it comes back), rolled back if a transaction is left open,
 *   then reused; destroyed only when it cannot be drained within `drainTimeoutMs`. Destroying it at
 *   once meant opening another for the next caller, for every timeout.
 * Callers beyond the pool's size wait here, each with its own timeout, so pg-pool's queue (whose
 * waiters stay in it until its own timeout) is never used.
 */
export function reuseGuard(pool: pg.Pool, options: GuardOptions = {}): PostgresPool {
  const max = pool.options?.max ?? 10;
  const acquireTimeoutMs = options.acquireTimeoutMs ?? pool.options?.connectionTimeoutMillis;
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  /** Connections asked of the pool and not yet given back: being opened, lent, or draining. */
  let lent = 0;
  const waiting: Waiter[] = [];
  let ended = false;

  /** A connection no caller holds any longer: to the next waiter, else back to the pool. */
  const handOn = (client: pg.PoolClient, destroy: boolean) => {
    if (!destroy) {
      const next = nextWaiter();
      if (next) {
        next.done = true;
        clearTimeout(next.timer);
        next.resolve(client);
        return;
      }
    }
    lent--;
    client.release(destroy ? true : undefined);
    pump();
  };
  const nextWaiter = (): Waiter | undefined => {
    for (let w = waiting.shift(); w; w = waiting.shift()) if (!w.done) return w;
    return undefined;
  };
  const ask = (w: Waiter) => {
    lent++;
    pool.connect().then(
      (client) => {
        if (w.done) handOn(client, false);
        else {
          w.done = true;
          clearTimeout(w.timer);
          w.resolve(client);
        }
      },
      (err: Error) => {
        lent--;
        if (!w.done) {
          w.done = true;
          clearTimeout(w.timer);
          w.reject(err);
        }
        pump();
      },
    );
  };
  /** While the pool has room, the waiters' turn (pg-pool then never queues: it has an idle one or room). */
  const pump = () => {
    while (lent < max && !ended) {
      const w = nextWaiter();
      if (!w) return;
      ask(w);
    }
  };
  const acquire = (): Promise<pg.PoolClient> =>
    new Promise<pg.PoolClient>((resolve, reject) => {
      const w: Waiter = { resolve, reject, done: false, timer: undefined };
      if (acquireTimeoutMs !== undefined && acquireTimeoutMs > 0) {
        w.timer = setTimeout(() => {
          if (w.done) return;
          w.done = true;
          reject(new Error(NO_CONNECTION));
        }, acquireTimeoutMs);
      }
      if (lent < max && waiting.length === 0) ask(w);
      else waiting.push(w);
    });

  /**
   * The abandoned statement's end: an empty query queued behind it is sent once the server has
   * answered it. Then a transaction left open is rolled back. True when the connection is idle outside
   * a transaction within `drainTimeoutMs`.
   */
  const drain = async (client: pg.PoolClient): Promise<boolean> => {
    const bounded = (text: string) =>
      client.query({ text, query_timeout: drainTimeoutMs } as unknown as string);
    try {
      await bounded("");
      const status = client.getTransactionStatus();
      if (status === "T" || status === "E") await bounded("rollback");
      return client.getTransactionStatus() === "I";
    } catch {
      return false;
    }
  };

  return {
    async connect(): Promise<PostgresPoolClient> {
      if (ended) throw new Error("Cannot use a pool after calling end on the pool");
      const client = await acquire();
      let abandoned = false;
      let settleDrained: ((drained: boolean) => void) | undefined;
      let drained: Promise<boolean> | undefined;
      const query = (sql: string, parameters: readonly unknown[]) => {
        const pending = client.query(sql, parameters as unknown[]);
        pending.then(undefined, (err: unknown) => {
          if (!(err instanceof Error) || (err.message !== ABANDONED && err.message !== LOST)) return;
          abandoned = true;
          drained ??= new Promise<boolean>((r) => {
            settleDrained = r;
          });
          // Set by node-postgres from the server's BackendKeyData; not in its type declarations.
          const pid = (client as unknown as { processID?: number | null }).processID;
          if (typeof pid === "number") Object.assign(err, { [BACKEND]: pid, [DRAINED]: drained });
        });
        return pending;
      };
      return {
        // Kysely passes a cursor only for streamed reads, which Warden does not use.
        query: query as unknown as PostgresPoolClient["query"],
        release: () => {
          if (fitForReuse(client, abandoned)) {
            handOn(client, false);
            return;
          }
          // Abandoned, or left inside a transaction: reused only once drained (settled in a later
          // turn: the abandonment is noted when the failed statement's rejection is handled).
          void drain(client).then((idle) => {
            // Whoever waits for the statement's outcome (abandonedWrites.ts) hears before the
            // connection can serve another caller: never a process ended under a new statement.
            settleDrained?.(idle);
            handOn(client, !idle);
          });
        },
      };
    },
    end: async () => {
      ended = true;
      for (let w = nextWaiter(); w; w = nextWaiter()) {
        w.done = true;
        clearTimeout(w.timer);
        w.reject(new Error("Cannot use a pool after calling end on the pool"));
      }
      await pool.end();
    },
  };
}
