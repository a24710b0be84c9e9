import { ApiError } from "../../errors.js";
import type { ReadMeter } from "../../store/interfaces.js";
import { retryAfterSeconds } from "../rateLimitWindow.js";

/** A read admitted under the budget: settled once with the rows it answered. */
export interface ReadTicket {
  /** Charges the key the time the read's statements took in the store, as they finish. */
  readonly meter: ReadMeter;
  /** Rows answered so far (a streamed export adds them batch by batch). */
  add(rows: number): void;
  /** The read is over: its rows stay counted, what it reserved and did not use is released. */
  settle(): void;
}

interface KeyBudget {
  window: number;
  spent: number;
  /** Rows reserved by reads still running (kept across windows until they settle). */
  reserved: number;
  /** Milliseconds the key's reads took in the store this window. */
  storeMs: number;
}

const WINDOW_MS = 60_000;

/**
 * Each API key's console reads per minute, counted in rows answered (a 50,000-row CSV export costs
 * 50,000, a JSON page of 50 costs 50, an aggregate the rows of its table, at least 1): the rows are
 * what a read costs this process's event loop (read from the store, converted, formatted and sent),
 * while the scans behind the aggregates run off it (SQLite's read worker at the lowest priority,
 * PostgreSQL's reads pool). A read is admitted while the key's minute has rows left, counting those
 * reserved by its reads still running (each reserves its most, e.g. its `limit`); past it the answer
 * is 429 `rate_limited` with Retry-After. One process's count, kept in memory (check and reservation
 * are one synchronous step): each worker of `warden serve --workers N` is given 1/N of the settings
 * (app.ts), so a key's readers, spread over the workers, get what the settings state; separate
 * processes each hold the whole.
 *
 * Rows answered are not what a read costs the store: a filter that matches one event in a month
 * scans the month for it. So the key's minute also holds `storeMsPerMinute` of its reads' time in the
 * store (each statement's, as it finishes: ReadMeter); a read is admitted while that is not spent
 * either (the read that spends it finishes, the next is refused).
 */
export class ReadBudget {
  private readonly keys = new Map<string, KeyBudget>();

  constructor(
    readonly rowsPerMinute: number,
    private readonly clock: () => number,
    readonly storeMsPerMinute = Number.POSITIVE_INFINITY,
  ) {}

  /** The key's budget for the current window, started afresh when the minute changed. */
  private current(budget: KeyBudget, now: number): KeyBudget {
    const window = Math.floor(now / WINDOW_MS);
    if (budget.window !== window) {
      budget.window = window;
      budget.spent = 0;
      budget.storeMs = 0;
    }
    return budget;
  }

  /** Admits a read of at most `reserve` rows for the key, or throws 429 rate_limited. */
  admit(keyId: string, reserve: number): ReadTicket {
    const now = this.clock();
    const window = Math.floor(now / WINDOW_MS);
    let budget = this.keys.get(keyId);
    if (!budget) {
      if (this.keys.size >= 10_000) this.sweep(window);
      budget = { window, spent: 0, reserved: 0, storeMs: 0 };
      this.keys.set(keyId, budget);
    } else this.current(budget, now);
    const over =
      budget.spent + budget.reserved >= this.rowsPerMinute
        ? `${this.rowsPerMinute} rows`
        : budget.storeMs >= this.storeMsPerMinute
          ? `${this.storeMsPerMinute / 1000} s of the store's time`
          : undefined;
    if (over !== undefined) {
      throw new ApiError(
        "rate_limited",
        `This API key's console reads are over ${over} this minute; retry after the number of seconds in Retry-After.`,
        { "retry-after": String(retryAfterSeconds(WINDOW_MS - (now % WINDOW_MS))) },
      );
    }
    const held = budget;
    const reserved = Math.max(1, reserve);
    held.reserved += reserved;
    let used = 0;
    let open = true;
    return {
      meter: Object.assign(
        (storeMs: number) => {
          this.current(held, this.clock()).storeMs += storeMs;
        },
        { holder: keyId },
      ),
      add: (rows) => {
        if (open) used += rows;
      },
      settle: () => {
        if (!open) return;
        open = false;
        held.reserved -= reserved;
        this.current(held, this.clock()).spent += Math.max(1, used);
      },
    };
  }

  /** Forgets keys with nothing running and no rows counted in this window. */
  private sweep(window: number): void {
    for (const [keyId, budget] of this.keys) {
      if (budget.reserved === 0 && budget.window !== window) this.keys.delete(keyId);
    }
  }
}
