import type { EventRecord } from "../../domain.js";
import {
  type IdempotencyKey,
  type IdempotentResponse,
  type Store,
  StoreRejectedError,
} from "../../store/interfaces.js";

/** The idempotency key a degraded event claims with its answer when it is written. */
export type PendingClaim = IdempotencyKey & { response: IdempotentResponse; expiresAt: number };

interface Pending {
  event: EventRecord;
  claim: PendingClaim | undefined;
}

export interface PendingEventSettings {
  /** At most this many events wait; past it the oldest is dropped (and counted). */
  capacity: number;
  /** How often a waiting queue retries the store. */
  retryMs: number;
}

/**
 * Events of degraded verdicts, kept in memory when the store cannot take them and written, in order,
 * when it returns: their eventIds then work for challenge and feedback. Bounded: past `capacity` the
 * oldest is dropped. On SIGTERM the queue is drained, and what the store still did not take is
 * written to the spool directory (degradedSpool.ts) for the next process; a crash loses what waits.
 */
export class PendingEvents {
  private readonly queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  dropped = 0;
  /** Refused by the store for what they hold, and dropped (they could never be written). */
  rejected = 0;
  /** Not written: their subject was erased after they were created (EventStore.record, "erased"). */
  erased = 0;
  written = 0;
  /** Where failures to write go; the app points it at its logger. */
  report: (err: unknown, what: string) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly settings: PendingEventSettings,
  ) {}

  get size(): number {
    return this.queue.length;
  }

  /**
   * Writes the event now if nothing is waiting and the store answers; queues it otherwise. With a
   * claim, the event is written together with its key's answer; when the key already holds this same
   * degraded answer (another process's copy, the same eventId) nothing more is written.
   *
   * Once the store has failed, the queue waits for its retry (`retryMs`): a new degraded answer does
   * not try again at once. Every degraded answer of a slow database trying its write on arrival kept
   * a transaction on verify's connections for each, the very load that degraded them.
   */
  add(event: EventRecord, claim?: PendingClaim): void {
    this.queue.push({ event, claim });
    if (this.queue.length > this.settings.capacity) {
      this.queue.shift();
      this.dropped++;
    }
    if (this.timer === undefined) void this.flush();
  }

  /**
   * Events read back from a spool: queued in their order behind what waits, then written. Their
   * claims are not spooled; a keyed degraded event keeps its id, which still makes it one event.
   */
  restore(events: readonly EventRecord[]): void {
    for (const event of events) this.add(event);
  }

  /** Empties the queue and hands back what waited (for the spool, after `drain`). */
  takeAll(): EventRecord[] {
    return this.queue.splice(0, this.queue.length).map((p) => p.event);
  }

  /**
   * Degraded events whose key already held another answer (a scored verdict that committed after this
   * process had answered degraded): written without the key, so the eventId their caller holds still
   * works for challenge and feedback, while the key replays the stored answer.
   */
  superseded = 0;

  /** Writes waiting events in order until the queue is empty or the store fails. */
  flush(): Promise<void> {
    // Assigned before the work can settle: `finally` runs on a later tick, never before this line.
    this.flushing ??= this.writeWaiting().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /**
   * A store that is down (StoreUnavailableError) holds the queue until it returns: every waiting event
   * would fail alike. An event the store refuses for what it holds (StoreRejectedError) can never be
   * written: it is dropped, counted and reported, and the events behind it go on.
   */
  private async writeWaiting(): Promise<void> {
    while (this.queue.length > 0) {
      const { event: next, claim } = this.queue[0] as Pending;
      try {
        const outcome = await this.store.events.record(next, claim);
        const heldBy =
          outcome.kind === "replay"
            ? (outcome.response.body as { eventId?: unknown } | null)?.eventId
            : undefined;
        if (outcome.kind === "recorded") this.written++;
        else if (outcome.kind === "erased") this.erased++;
        else if (heldBy !== next.id) {
          // Not another process's copy of this same event (same key, same id): another answer.
          if ((await this.store.events.record(next, undefined)).kind === "erased") this.erased++;
          else {
            this.superseded++;
            this.written++;
          }
        }
      } catch (err) {
        if (!(err instanceof StoreRejectedError)) {
          this.report(err, `degraded events waiting for the store: ${this.queue.length}`);
          this.schedule();
          return;
        }
        this.rejected++;
        this.report(err, `degraded event ${next.id} dropped: the store refused it`);
      }
      this.queue.shift();
    }
  }

  /** On shutdown: keeps flushing until the queue is empty or `timeoutMs` has passed; resolves what is left. */
  async drain(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length > 0 && Date.now() < deadline) {
      await this.flush();
      if (this.queue.length > 0)
        await new Promise((r) => setTimeout(r, Math.min(200, this.settings.retryMs)));
    }
    this.stop();
    return this.queue.length;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.settings.retryMs);
    this.timer.unref();
  }
}
