import { createHash } from "node:crypto";

/**
 * The store contract, retention and erasure: events removed with everything on them
 * (EventRemovalStore). Each method states its guarantees; "atomic" is as store/interfaces.ts
 * defines it.
 */

/**
 * Whose events an erasure removes, within one tenant: every event with this email hash (SHA-256 hex
 * of the trimmed, lower-cased address, as verify stores it), this truncated network, this session,
 * or the one event.
 */
export type ErasureSubject =
  | { emailHash: string }
  | { network: string }
  | { session: string }
  | { eventId: string };

/** How long an erasure is remembered against late degraded events (the subject's hash or network only). */
export const ERASURE_MEMORY_MS = 30 * 86_400_000;

/** The kind of an erasure's subject and its value. */
export function erasureKind(subject: ErasureSubject): { kind: ErasedKind; value: string } {
  if ("emailHash" in subject) return { kind: "email_hash", value: subject.emailHash };
  if ("network" in subject) return { kind: "network", value: subject.network };
  if ("session" in subject) return { kind: "session", value: subject.session };
  return { kind: "event", value: subject.eventId };
}

export type ErasedKind = "email_hash" | "network" | "session" | "event";

/**
 * What the erasures table keeps of an erased value: a one-way digest of it, so that the erased
 * email hash, network, session or event id is not on disk after the erasure; a late event's values
 * are digested alike to be compared.
 */
export const erasedDigest = (kind: ErasedKind, value: string): string =>
  createHash("sha256").update(`warden-erasure\n${kind}\n${value}`).digest("hex");

/** One cutoff for every tenant (epoch ms), or each tenant's own (undefined: none of its events go). */
export type RetentionCutoff = number | ((tenantId: string) => Promise<number | undefined>);

/** What a removal deleted, by kind of row. */
export interface RemovedRows {
  /** Events, the other event of each removed event's attempt included (docs/api.md, "Attempts"). */
  events: number;
  challenges: number;
  /** Redeemed clears (event_clears). */
  clears: number;
  /** Feedback observations, whatever their status. */
  observations: number;
  /** Resolutions of quarantined observations. */
  resolutions: number;
  /** Stored idempotent answers that would replay a removed event (verify's verdicts, feedback's acks). */
  idempotentAnswers: number;
}

/** Nothing removed yet: what a removal counts up from. */
export const noneRemoved = (): RemovedRows => ({
  events: 0,
  challenges: 0,
  clears: 0,
  observations: 0,
  resolutions: 0,
  idempotentAnswers: 0,
});

/**
 * Removing events with everything that hangs off them: retention and the erasure of one person's data.
 * An event is removed with its attempt's other event (the first verdict and the re-verify that redeemed
 * its clear go together), the challenges issued on them, their clear, every feedback observation and
 * resolution on them, and the idempotent answers that would replay them.
 *
 * Atomic per chunk: the work is done in chunks of events (SqlRuntime.removalPace), each one transaction that
 * removes its events and all their dependants together, so no state is ever visible (or left by a
 * failure) where an observation, a challenge or a stored answer outlives its event. The exception is
 * a whole week dropped on PostgreSQL (olderThan): its events leave at once, and what hangs off them
 * follows in chunks, by the end of the pass (or of the next, if this one is stopped). Between chunks
 * other work runs (SQLite: the event loop turns, so verify interleaves). Idempotent: running it again
 * removes what is left, and nothing once nothing matches. With `signal` aborted it stops between
 * chunks, resolving what it removed so far.
 */
export interface EventRemovalStore {
  /**
   * Removes every tenant's events created before `before` (epoch ms) with their dependants; `before`
   * as a function gives each tenant's own cutoff (undefined: keep its events), asked once per tenant
   * and pass. Of several processes running it at once, one removes a tenant's events at a time; the
   * others pass over that tenant (they would only find the same rows locked, then gone).
   *
   * `signal` stops it between two steps (a shutdown). `windowEnd` (the end of WARDEN_RETENTION_HOURS)
   * stops the row-by-row removal between two chunks and the start of another week's drop, but lets a
   * week whose drop has begun be finished: a drop that outlasted its window would otherwise start
   * over at every window and never end.
   */
  olderThan(before: RetentionCutoff, signal?: AbortSignal, windowEnd?: AbortSignal): Promise<RemovedRows>;
  /**
   * Removes one tenant's events of `subject` with their dependants (an attempt's other event, and its
   * degraded events: same session and attempt fingerprint, even when they do not match the subject
   * themselves). On SQLite the freed space is overwritten (secure_delete).
   * Before removing, it remembers the subject for ERASURE_MEMORY_MS (or until the tenant's retention
   * passes it, if sooner): a degraded event of the subject created before the erasure and written
   * after it (a spool restored on a later start, a queue flushed when the store returns) is refused
   * by EventStore.record ("erased"). olderThan forgets the erasures past that time.
   */
  erase(tenantId: string, subject: ErasureSubject, signal?: AbortSignal): Promise<RemovedRows>;
  /**
   * Makes sure the coming weeks' events have somewhere to go: on PostgreSQL, creates the weekly
   * partitions of events that are missing up to a few weeks past `now` (docs/deployment.md,
   * "Partitions"; the table owner's right), resolving their names; SQLite has none to make. Of
   * several processes, one creates at a time; the others resolve none.
   */
  partitionsAhead(now: number): Promise<string[]>;
}
