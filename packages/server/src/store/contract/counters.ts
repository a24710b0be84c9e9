/**
 * The store contract, sliding-window counters: velocity and rate limits (CounterStore). Each method
 * states its guarantees; "atomic" is as store/interfaces.ts defines it.
 */

/** A sliding-window counter: `name` is an opaque key (callers hash anything personal before). */
export interface CounterHit {
  name: string;
  windowMs: number;
  /**
   * The tenant the counter belongs to, where it belongs to one. Not part of the counter's identity:
   * a name is always hit with the same tenant. Placement only: on a Redis Cluster a tenant's
   * counters share one slot, so one call's counters of one tenant are one script.
   */
  tenantId?: string;
}

export interface CounterReading {
  /** Count in the current fixed bucket, this hit included. */
  current: number;
  /** Count in the previous bucket of the same width. */
  previous: number;
  /** Fraction of the current bucket already elapsed, in [0, 1). */
  elapsed: number;
}

export interface CounterStore {
  /**
   * Atomic per counter: adds one to the counter's current bucket and reads it with the previous
   * bucket in one statement. Concurrent hits from many processes are never lost. (Counters are
   * independent, so a call with several is not one transaction.) A counter (name and window) given
   * twice in one call is hit once, and both its readings are that hit's. The readings may come back before
   * the hit is durable (SQLite: so that the event written next shares its commit). It is durable once
   * the caller's next write is; a commit that fails loses it, and fails that next write too when the
   * two share the commit.
   */
  hit(hits: readonly CounterHit[], now: number): Promise<CounterReading[]>;
  /** Deletes buckets that can no longer be read; resolves how many (0 where counters expire by themselves). */
  purgeExpired(now: number): Promise<number>;
}
