/**
 * The store contract, events: each verify's one record, with the answer stored under its key and
 * the clear it redeems (EventStore). Each method states its guarantees; "atomic" is as
 * store/interfaces.ts defines it.
 */

import type { EventRecord } from "../../domain.js";
import type { IdempotencyKey, IdempotentResponse } from "./idempotency.js";

export type RecordOutcome =
  | { kind: "recorded" }
  | { kind: "replay"; response: IdempotentResponse }
  | { kind: "conflict" }
  /** Asked for `activeKey` and the event's API key is revoked (or gone): nothing was written. */
  | { kind: "key_revoked" }
  /** Asked to `redeem` a clear that could not be redeemed (any condition failed): nothing was written. */
  | { kind: "not_redeemed" }
  /**
   * A degraded event (written after its answer, from a queue or a spool) whose subject was erased
   * after the event was created: nothing was written (EventRemovalStore.erase).
   */
  | { kind: "erased" };

/** A challenge's clear, redeemed by the verify whose event is being recorded. */
export interface ClearRedemption {
  challengeId: string;
  /**
   * The event the challenge was issued on. One clear is redeemed per event, whichever of its
   * challenges earned it: a challenged attempt yields at most one allow through a clear.
   */
  eventId: string;
  session: string;
  /** The re-verify's attempt fingerprint; must equal the challenge's. */
  attempt: string;
  /** The clear must have happened at or after this time (the redemption window). */
  clearedSince: number;
}

/**
 * A caller's hold on a write it may still abandon (verify's deadline). The store calls `commit()` at
 * the last moment it can still write nothing: false, and it abandons the write (rejecting with an
 * "aborted" error, nothing written); true, and from then on the write goes through, so the caller
 * must wait for its outcome whatever its deadline says. An answer is therefore never given while a
 * write that contradicts it (an event, an idempotent answer) can still commit.
 */
export interface WriteSignal {
  commit(): boolean;
}

export interface EventStore {
  /**
   * Atomic: writes the event and, when an idempotency key is given, the response stored under it.
   * If the key already holds a response, nothing is written: the stored response is returned for
   * the same fingerprint ("replay"), or "conflict" for a different one. Of any number of concurrent
   * calls with one key, exactly one records its event.
   * `signal` is asked right before the write becomes irreversible (WriteSignal): refused, nothing is
   * written. Writing an event whose id exists
   * already changes nothing (a retry whose first answer was lost).
   * With `activeKey`, the write is conditional, in the same statement or transaction, on the event's
   * API key not being revoked at that moment ("key_revoked" otherwise): verify authenticates from
   * memory and is still refused for a key revoked a moment before its event was written.
   * With `redeem`, the same transaction marks the challenge's clear redeemed (redeemedAt = the event's
   * createdAt) if the challenge belongs to the event's tenant, is bound to `session` and `attempt`, was
   * cleared at or after `clearedSince` and was never redeemed; otherwise nothing at all is written
   * ("not_redeemed"). A clear is therefore spent only together with the answer that honours it (or,
   * for a degraded verdict's clear, the scored deny of its attempt): an aborted or failed record
   * leaves it redeemable, and of concurrent calls exactly one redeems it.
   * A degraded event whose email hash, network, session or id an erasure named after the event's
   * createdAt is not written ("erased"), atomically with that erasure: the event is either refused
   * here or written before the erasure, which then removes it.
   */
  record(
    event: EventRecord,
    idempotency: (IdempotencyKey & { response: IdempotentResponse; expiresAt: number }) | undefined,
    signal?: WriteSignal,
    options?: { activeKey?: boolean; redeem?: ClearRedemption },
  ): Promise<RecordOutcome>;
  /** One event of the tenant, for the routes off verify's path (it may wait for a busy database, as Store.patient's calls do). */
  get(tenantId: string, eventId: string): Promise<EventRecord | undefined>;
}
