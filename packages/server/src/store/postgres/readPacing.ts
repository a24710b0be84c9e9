import { StoreUnavailableError } from "../interfaces.js";

export interface ReadPacingOptions {
  /**
   * The share of the time reads may hold the database at most: after a read of d ms the next one
   * starts no sooner than d × (1 / share − 1) ms later. 1: back to back.
   */
  share: number;
  /** How long a read may wait for its turn before it is refused (StoreUnavailableError). */
  maxWaitMs: number;
}

/**
 * The console's long reads, one at a time per process and paced (postgresStore.ts, "reads"). They
 * run on the primary beside verify's statements, and PostgreSQL has no priorities: a scan on one
 * server process takes a core verify's statements need. Paced, the reads of one process hold the
 * database at most `share` of the time, however many operators read at once: each read waits for
 * the one before it and its pause. A read whose turn does not come within `maxWaitMs` is refused, as
 * a pool that has no connection free in time refuses it.
 */
export function readPacing(
  opts: ReadPacingOptions,
  clock: () => number = () => performance.now(),
): <T>(read: () => Promise<T>) => Promise<T> {
  /** When the read in front (with its pause) will have left the way free. */
  let tail: Promise<void> = Promise.resolve();
  const pauseAfter = (tookMs: number): number => (opts.share >= 1 ? 0 : tookMs * (1 / opts.share - 1));
  return <T>(read: () => Promise<T>): Promise<T> => {
    const turn = tail;
    let leave!: () => void;
    tail = new Promise<void>((resolve) => {
      leave = resolve;
    });
    return new Promise<T>((resolve, reject) => {
      let refused = false;
      const timer = setTimeout(() => {
        refused = true;
        reject(
          new StoreUnavailableError(
            `the console's reads are paced to leave the database to verify: this one waited ${opts.maxWaitMs} ms for its turn`,
          ),
        );
      }, opts.maxWaitMs);
      void turn.then(async () => {
        // Its caller has had its answer: the way passes on at once.
        if (refused) return leave();
        clearTimeout(timer);
        const started = clock();
        try {
          resolve(await read());
        } catch (err) {
          reject(err);
        } finally {
          const pause = pauseAfter(clock() - started);
          if (pause > 0) setTimeout(leave, pause);
          else leave();
        }
      });
    });
  };
}
