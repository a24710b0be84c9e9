import type SQLite from "better-sqlite3";
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

type Conn = Kysely<Database>;

interface Job {
  fn: (conn: Conn) => Promise<unknown>;
  /** Several statements: isolated by a savepoint so its failure rolls back only itself. */
  multiStatement: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for the SQLite store. Writes queued during one turn of the event loop run in one
 * BEGIN IMMEDIATE … COMMIT on the next turn; each caller's promise settles only after that commit,
 * so nothing is acknowledged before it is durable. Each write is still atomic on its own: a
 * single-statement write is atomic by itself, a multi-statement one runs inside a savepoint.
 * One commit per batch instead of one per write is what makes SQLite fast under concurrency: a commit
 * writes every page it touched to the WAL, and concurrent writes touch the same pages.
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

  run<T>(fn: (conn: Conn) => Promise<T>, multiStatement: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, multiStatement, resolve: resolve as (v: unknown) => void, reject });
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
    this.scheduled = false;
    if (this.paused || this.queue.length === 0) return;
    const jobs = this.queue;
    this.queue = [];
    await this.db.connection().execute(async (conn) => {
      this.active = true;
      try {
        await this.runBatch(conn, jobs);
      } finally {
        this.active = false;
        for (const resolve of this.idle.splice(0)) resolve();
      }
    });
  }

  private async runBatch(conn: Conn, jobs: Job[]): Promise<void> {
    try {
      await sql`begin immediate`.execute(conn);
    } catch (err) {
      for (const job of jobs) job.reject(err);
      return;
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    for (const job of jobs) {
      outcomes.push(await this.runJob(conn, job));
      // Some errors (disk full, I/O) make SQLite roll the whole transaction back: then nothing
      // in this batch is stored, and every job must fail, including those that ran before.
      if (!this.raw.inTransaction) {
        const rolledBack = new Error("SQLite rolled the batch back after an error");
        jobs.forEach((j, i) => {
          const o = outcomes[i];
          j.reject(o && !o.ok ? o.value : rolledBack);
        });
        return;
      }
    }
    try {
      await sql`commit`.execute(conn);
    } catch (err) {
      if (this.raw.inTransaction) await sql`rollback`.execute(conn).catch(() => undefined);
      for (const job of jobs) job.reject(err);
      return;
    }
    jobs.forEach((job, i) => {
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
