/**
 * Group commit for one kind of write: jobs submitted while a batch of the same kind is in flight (or
 * in the same turn of the event loop) go to the database together, as one statement and one commit.
 * As load rises, batches grow and each write costs the database less (one parse-free statement, one
 * WAL flush, one lock round for a hot row per batch instead of per write); a lone write waits at most
 * one turn of the event loop.
 */
export type JobOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<J, R> {
  job: J;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export interface WriteBatchOptions<J, R> {
  /** Runs one batch; answers one outcome per job, in order. Throwing fails every job of the batch. */
  run(jobs: J[]): Promise<JobOutcome<R>[]>;
  /** Batches in flight at once (each holds one connection). */
  maxInFlight: number;
  /** Jobs per batch at most. */
  maxJobs: number;
  /**
   * Called for each job as its batch leaves, the moment its write becomes irreversible: false drops
   * the job (its promise rejects with `dropped()`), as a write abandoned at verify's deadline is.
   */
  admit?(job: J): boolean;
  dropped?(): Error;
}

export class WriteBatch<J, R> {
  readonly #opts: WriteBatchOptions<J, R>;
  #pending: Pending<J, R>[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(opts: WriteBatchOptions<J, R>) {
    this.#opts = opts;
  }

  submit(job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#pending.push({ job, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#opts.maxInFlight || this.#pending.length === 0) return;
    this.#scheduled = true;
    // After the poll phase: every request read in this turn joins the batch.
    setImmediate(() => {
      this.#scheduled = false;
      this.#send();
    });
  }

  #send(): void {
    while (this.#inFlight < this.#opts.maxInFlight && this.#pending.length > 0) {
      const taken = this.#pending.splice(0, this.#opts.maxJobs);
      const batch: Pending<J, R>[] = [];
      for (const p of taken) {
        if (!this.#opts.admit || this.#opts.admit(p.job)) batch.push(p);
        else p.reject(this.#opts.dropped?.() ?? new Error("write dropped"));
      }
      if (batch.length === 0) continue;
      this.#inFlight++;
      this.#opts
        .run(batch.map((p) => p.job))
        .then(
          (outcomes) => {
            batch.forEach((p, i) => {
              const o = outcomes[i];
              if (o === undefined) p.reject(new Error("write batch: no outcome for a job"));
              else if (o.ok) p.resolve(o.value);
              else p.reject(o.error);
            });
          },
          (err: unknown) => {
            for (const p of batch) p.reject(err);
          },
        )
        .finally(() => {
          this.#inFlight--;
          // What arrived while this batch was in flight leaves now, as one batch.
          this.#send();
        });
    }
  }
}
