/**
 * The store contract, challenges: issued, cleared once (ChallengeStore); a clear is redeemed by
 * events.record. Each method states its guarantees; "atomic" is as store/interfaces.ts defines it.
 */

import type { ChallengeMethod } from "../../domain.js";

/** One issued challenge. Method, difficulty and seed are sealed at issue and never change. */
export interface ChallengeRecord {
  id: string;
  tenantId: string;
  eventId: string;
  /** The session the challenge clears (boundTo). */
  session: string;
  method: ChallengeMethod;
  difficulty: number | null;
  seed: string | null;
  /** Method-specific instructions as returned at issue. */
  instructions: Record<string, unknown>;
  issuedAt: number;
  expiresAt: number;
  clearedAt: number | null;
  redeemedAt: number | null;
  /**
   * What proved the clear when a proof clears one challenge only (a SetupIntent id, a proof of work's
   * seed); unique across challenges.
   */
  proofRef: string | null;
  /**
   * The completion that cleared it, when that completion carried an Idempotency-Key: the key's and the
   * payload's hashes (operations/challenge/completionKey.ts). Set by the clearing update only.
   */
  completionKey: string | null;
  /** The attempt fingerprint of the event it was issued on: only a re-verify of that attempt redeems it. */
  attempt: string | null;
  /** Issued on a degraded verdict: its clear stands in for checks that never ran (re-verify scores). */
  eventDegraded: boolean;
}

export type ClearOutcome =
  | { kind: "cleared"; challenge: ChallengeRecord }
  /** Not the tenant's, another session, already cleared or expired. */
  | { kind: "not_clearable" }
  /** `proofRef` already proved another challenge's clear. */
  | { kind: "proof_reused" };

export interface ChallengeStore {
  /**
   * Atomic: inserts the challenge on condition that the tenant holds its event; resolves false (and
   * writes nothing) when it does not (removed by retention or erasure since it was read). A removal
   * running at the same time either happens first or removes the challenge with the event.
   */
  insert(challenge: ChallengeRecord): Promise<boolean>;
  get(tenantId: string, id: string): Promise<ChallengeRecord | undefined>;
  /**
   * Atomic and once only: marks the challenge cleared at `now` if it belongs to the tenant, is bound
   * to `session`, is not cleared yet and has not expired (of concurrent calls, exactly one succeeds).
   * A `proofRef` is unique across challenges: one already recorded gives "proof_reused" and changes
   * nothing. `completionKey` is recorded by the same update. Redemption by a re-verify is part of
   * `events.record`.
   */
  clear(
    tenantId: string,
    id: string,
    session: string,
    now: number,
    proofRef?: string,
    completionKey?: string,
  ): Promise<ClearOutcome>;
  /** Whether a re-verify already redeemed the clear of one of this event's challenges. */
  eventClearUsed(tenantId: string, eventId: string): Promise<boolean>;
  /**
   * Whether a challenge of the tenant was cleared with `proofRef` (a read: `clear` alone makes a
   * proof clear one challenge, atomically; this lets an issue avoid sealing one already spent).
   */
  proofUsed(tenantId: string, proofRef: string): Promise<boolean>;
}
