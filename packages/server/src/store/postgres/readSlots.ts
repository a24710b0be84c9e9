import { type CompiledQuery, type Kysely, sql } from "kysely";
import type { ReadMeter } from "../interfaces.js";
import type { Database } from "../schema.js";

/**
 * The first key of the read slots' advisory locks (pg_advisory_xact_lock's two-key form, whose keys
 * never meet the one-key locks the store takes elsewhere); the second key is the slot's number.
 */
export const READ_SLOT_LOCK_CLASS = 0x77617264;

export interface ReadSlotSettings {
  /** Long reads running at once on the server they read, across every process reading it. */
  readonly slots: number;
  /**
   * The share of its time a slot may spend reading, in percent: after a read of T ms its slot stays
   * taken, idle, for T × (100 − share) / share ms more (at most `timeoutMs`). 100: no rest.
   */
  readonly share: number;
  /** The read statement timeout: the longest rest, and the longest wait for a holder's turn. */
  readonly timeoutMs: number;
}

/**
 * The console's long reads (aggregates, lists, exports, ledger totals) on PostgreSQL, each in one of
 * `slots` read slots of the server it reads: a transaction-scoped advisory lock, taken before the
 * read's statement and freed as its transaction ends (a lost connection's too). However many Warden
 * processes and workers read one database, at most `slots` of these statements run on it at once,
 * and each slot reads at most `share` percent of the time: the console's scans take at most
 * slots × share% of one of the server's cores, which verify's statements would otherwise wait for
 * (PostgreSQL has no priorities, and where it shares a few cores with Warden a scan's core is one
 * that verify needed). Without it every process's two read connections scanned at once: four full
 * cores' worth of scans on a 2-core machine under `--workers 2`.
 *
 * A read that finds every slot taken waits in PostgreSQL for one (a lock wait costs no CPU), within
 * its statement timeout like any statement (past it: StoreUnavailable). Its answer is returned as
 * soon as its statement ends; the slot's rest is then taken on the same transaction with nothing
 * running (no snapshot is held between statements at READ COMMITTED). The transaction keeps one
 * server connection throughout, behind a transaction pooler too.
 *
 * One holder's reads (ReadMeter.holder: an API key) take their slots one after another in this
 * process, each after the last one's rest: a key's many readers hold one of the process's read
 * connections at a time, and another key's read finds the other one. A read whose turn has not come
 * within the timeout fails like a statement past it.
 */
export class ReadSlots {
  private readonly resting = new Set<() => void>();
  /** Each holder's last read in this process: settled once its slot is free again. */
  private readonly holders = new Map<string, Promise<void>>();

  constructor(private readonly settings: ReadSlotSettings) {}

  /**
   * Runs `query` in a slot; resolves its rows as its statement ends. `meter` is charged the
   * statement's own time: not the waits for the holder's turn, a connection or a slot (other reads'
   * time, charged to them), nor the slot's rest.
   */
  run<R>(reads: Kysely<Database>, query: CompiledQuery<R>, meter?: ReadMeter): Promise<R[]> {
    return new Promise<R[]>((resolve, reject) => {
      const holder = meter?.holder;
      const previous = holder === undefined ? undefined : this.holders.get(holder);
      const turn = this.after(previous).then((came) => {
        if (came) return this.inSlot(reads, query, meter, resolve, reject);
        reject(new Error(`waited ${this.settings.timeoutMs} ms for the same key's earlier reads`));
        // This read never ran: the holder's next one waits for the same earlier reads.
        return previous;
      });
      if (holder === undefined) return;
      this.holders.set(holder, turn);
      void turn.then(() => {
        if (this.holders.get(holder) === turn) this.holders.delete(holder);
      });
    });
  }

  /** Whether `previous` (a holder's last read) settled within the timeout. */
  private after(previous: Promise<void> | undefined): Promise<boolean> {
    if (previous === undefined) return Promise.resolve(true);
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      previous.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), this.settings.timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** Cuts every rest short (the store is closing: its connections must come back). */
  close(): void {
    for (const wake of this.resting) wake();
  }

  /** One read's transaction: its slot, its statement (answered), its rest. Never rejects. */
  private async inSlot<R>(
    reads: Kysely<Database>,
    query: CompiledQuery<R>,
    meter: ReadMeter | undefined,
    answer: (rows: R[]) => void,
    fail: (err: unknown) => void,
  ): Promise<void> {
    const { slots, share, timeoutMs } = this.settings;
    await reads
      .transaction()
      .execute(async (trx) => {
        // The first free slot, tried in order without waiting; the scan stops at the first taken.
        const { rows } = await sql<{ slot: number | null }>`select (select s
          from generate_series(0, ${slots - 1}::int) s
          where pg_try_advisory_xact_lock(${READ_SLOT_LOCK_CLASS}::int, s) limit 1) as slot`.execute(trx);
        if (rows[0]?.slot === null || rows[0]?.slot === undefined) {
          const slot = Math.floor(Math.random() * slots);
          await sql`select pg_advisory_xact_lock(${READ_SLOT_LOCK_CLASS}::int, ${slot}::int)`.execute(trx);
        }
        const started = performance.now();
        let result: R[];
        try {
          result = (await trx.executeQuery(query)).rows;
        } finally {
          meter?.(performance.now() - started);
        }
        answer(result);
        const took = performance.now() - started;
        await this.rest(Math.min(timeoutMs, (took * (100 - share)) / share));
      })
      // After `answer` this does nothing: a commit that fails after the rest ends nothing the read needed.
      .catch(fail);
  }

  private rest(ms: number): Promise<void> {
    if (!(ms >= 1)) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.resting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.resting.add(wake);
    });
  }
}
