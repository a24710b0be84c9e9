import type SQLite from "better-sqlite3";
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

type Conn = Kysely<Database>;

interface Job {
  fn: (conn: Conn) => Promise<unknown>;
  /** Several statements: isolated by a savepoint so its failure rolls back only itself. */
  multiStatement: boolean;
  /** Settles as soon as it ran, before the commit (see `run`). */
  early: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** How many rounds of jobs one batch takes in at most before it commits (see `runBatch`). */
const MAX_ROUNDS = 4;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Group commit for the SQLite store. Writes queued during one turn of the event loop run in one
 * BEGIN IMMEDIATE … COMMIT on the next turn; each caller's promise settles only after that commit,
 * so nothing is acknowledged before it is durable. Each write is still atomic on its own: a
 * single-statement write is atomic by itself, a multi-statement one runs inside a savepoint.
 * One commit per batch instead of one per write is what makes SQLite fast under concurrency: a commit
 * writes every page it touched to the WAL, and concurrent writes touch the same pages.
 *
 * An `early` job settles as soon as it ran inside the open batch, and the batch then stays open for
 * one more turn of the event loop, so the writes its caller makes next (verify: the event, written
 * once the counters it just read have been scored) commit in the same transaction instead of a batch
 * of their own. Only a job whose result is safe to use before it is durable may be early: its effect
 * becomes durable with the caller's next write (one connection commits in order), and is lost only if
 * the batch fails to commit, which fails that next write too when it shares the batch.
 */
export class GroupCommit {
  private queue: Job[] = [];
  private scheduled = false;
  /** A batch holds the connection (its transaction is open). */
  active = false;
  /** While paused (for a WAL restart), writes queue up and no batch starts. */
  private paused = false;
  private idle: (() => void)[] = [];

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: SQLite.Database,
  ) {}

  run<T>(fn: (conn: Conn) => Promise<T>, multiStatement: boolean, early = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, multiStatement, early, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * Holds new batches back and resolves once none is running: the checkpointer then restarts the
   * WAL without this connection's writers waiting on SQLite's (synchronous, loop-blocking) busy
   * handler. Writes arriving meanwhile wait in the queue; `resume` lets them go.
   */
  pause(): Promise<void> {
    this.paused = true;
    if (!this.active) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.queue.length > 0) this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.paused) return;
    this.scheduled = true;
    setImmediate(() => {
      this.flush().catch(() => {
        // flush settles every job itself; nothing is left to report here.
      });
    });
  }

  private async flush(): Promise<void> {
    // `scheduled` stays set while the batch is open: jobs queued meanwhile either join it (see
    // runBatch) or get the next batch, scheduled when this one ends.
    if (this.paused || this.queue.length === 0) {
      this.scheduled = false;
      return;
    }
    let started = false;
    try {
      await this.db.connection().execute(async (conn) => {
        started = true;
        this.active = true;
        try {
          await this.runBatch(conn);
        } finally {
          this.active = false;
          for (const resolve of this.idle.splice(0)) resolve();
        }
      });
    } catch (err) {
      // No connection (the store was closed): the queued writes fail instead of waiting forever,
      // and nothing is rescheduled.
      if (!started) for (const job of this.queue.splice(0)) job.reject(err);
    } finally {
      this.scheduled = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  /**
   * One transaction over the queued jobs. After a round that settled an early job, the batch waits one
   * turn of the event loop and takes in what was queued meanwhile, up to MAX_ROUNDS rounds.
   */
  private async runBatch(conn: Conn): Promise<void> {
    let round = this.queue.splice(0);
    try {
      await sql`begin immediate`.execute(conn);
    } catch (err) {
      for (const job of round) job.reject(err);
      return;
    }
    const jobs: Job[] = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    for (let r = 1; ; r++) {
      for (const job of round) {
        const outcome = await this.runJob(conn, job);
        jobs.push(job);
        outcomes.push(outcome);
        // Some errors (disk full, I/O) make SQLite roll the whole transaction back: then nothing
        // in this batch is stored, and every job must fail, including those that ran before.
        if (!this.raw.inTransaction) {
          const rolledBack = new Error("SQLite rolled the batch back after an error");
          jobs.forEach((j, i) => {
            const o = outcomes[i];
            j.reject(o && !o.ok ? o.value : rolledBack);
          });
          for (const j of round.slice(round.indexOf(job) + 1)) j.reject(rolledBack);
          return;
        }
        if (job.early) {
          if (outcome.ok) job.resolve(outcome.value);
          else job.reject(outcome.value);
        }
      }
      if (r >= MAX_ROUNDS || this.paused || !round.some((j) => j.early)) break;
      await nextTurn();
      round = this.queue.splice(0);
      if (round.length === 0) break;
    }
    try {
      await sql`commit`.execute(conn);
    } catch (err) {
      if (this.raw.inTransaction) await sql`rollback`.execute(conn).catch(() => undefined);
      for (const job of jobs) if (!job.early) job.reject(err);
      return;
    }
    jobs.forEach((job, i) => {
      if (job.early) return;
      const o = outcomes[i] as { ok: boolean; value: unknown };
      if (o.ok) job.resolve(o.value);
      else job.reject(o.value);
    });
  }

  private async runJob(conn: Conn, job: Job): Promise<{ ok: boolean; value: unknown }> {
    if (!job.multiStatement) {
      try {
        return { ok: true, value: await job.fn(conn) };
      } catch (err) {
        return { ok: false, value: err };
      }
    }
    await sql`savepoint job`.execute(conn);
    try {
      const value = await job.fn(conn);
      await sql`release job`.execute(conn);
      return { ok: true, value };
    } catch (err) {
      if (this.raw.inTransaction) {
        await sql`rollback to job`.execute(conn);
        await sql`release job`.execute(conn);
      }
      return { ok: false, value: err };
    }
  }
}
