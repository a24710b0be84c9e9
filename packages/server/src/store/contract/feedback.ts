/**
 * The store contract, the feedback ledger: observations and the resolutions of quarantined ones
 * (FeedbackStore). Each method states its guarantees; "atomic" is as store/interfaces.ts defines
 * it.
 */

import type { ObservationStatus, Resolution } from "../../domain.js";
import type { IdempotencyKey, IdempotentResponse } from "./idempotency.js";

/** A person's decision on a quarantined observation, appended once and never changed. */
export interface FeedbackResolution {
  tenantId: string;
  feedbackId: string;
  eventId: string;
  resolution: Resolution;
  note: string | null;
  /** The API key that resolved it (a console session's key for the console). */
  keyId: string;
  resolvedAt: number;
  /** The effective observations an accepted one superseded, in acceptance order; empty on reject. */
  superseded: string[];
}

export type ResolveOutcome =
  | { kind: "resolved"; resolution: FeedbackResolution }
  | { kind: "already_resolved"; resolution: FeedbackResolution }
  | { kind: "not_quarantined"; status: ObservationStatus }
  | { kind: "unknown" };

/** One feedback observation as the ledger keeps it (append-only). */
export interface Observation {
  feedbackId: string;
  tenantId: string;
  eventId: string;
  outcome: string;
  value: number | null;
  /** usd, credits or count; null when there is no value. */
  unit: string | null;
  source: string | null;
  observedAt: number;
  receivedAt: number;
  /** SHA-256 of the observation's identity (docs/api.md#post-v1feedback-and-the-ledger). */
  identity: string;
  status: ObservationStatus;
  /** The effective observation this one conflicted with, when quarantined. */
  conflictsWith: string | null;
}

export type AppendOutcome =
  | { kind: "appended"; observation: Observation }
  /** The tenant holds no such event (never, or no longer: retention, erasure): nothing was written. */
  | { kind: "unknown_event" }
  | { kind: "duplicate"; feedbackId: string }
  | { kind: "replay"; response: IdempotentResponse }
  | { kind: "conflict" };

export interface LedgerFilter {
  since?: number;
  until?: number;
  action?: string;
}

/** One aggregate row: observations of one outcome, unit and status. */
export interface LedgerRow {
  outcome: string;
  unit: string | null;
  status: ObservationStatus;
  count: number;
  total: number;
}

export interface FeedbackStore {
  /**
   * Atomic, and serialized per eventId across processes: returns "unknown_event" when the tenant holds
   * no such event, claims the idempotency key (replay or conflict when it is taken), returns
   * "duplicate" when an observation with the same identity exists, otherwise inserts the observation,
   * quarantined (with a reference) when an *effective* observation on the same event has one of
   * `conflictingOutcomes`, effective otherwise. Nothing is half-written. The event cannot be removed
   * (EventRemovalStore) while this runs: a removal either happens first ("unknown_event") or removes
   * the observation too.
   */
  append(
    observation: Omit<Observation, "status" | "conflictsWith">,
    conflictingOutcomes: readonly string[],
    idempotency: (IdempotencyKey & { response: IdempotentResponse; expiresAt: number }) | undefined,
  ): Promise<AppendOutcome>;
  /** All observations of one event, in the order the ledger accepted them. */
  listForEvent(tenantId: string, eventId: string): Promise<Observation[]>;
  /** Aggregates by outcome, unit and status over observedAt in [since, until), joined to the event's action. */
  aggregate(tenantId: string, filter: LedgerFilter): Promise<LedgerRow[]>;
  /**
   * Quarantined observations (newest first by receivedAt, then feedbackId) with the observation each
   * conflicted with; with `before`, only those after that one in this order (the next page).
   */
  quarantined(
    tenantId: string,
    filter: LedgerFilter,
    limit: number,
    before?: { receivedAt: number; feedbackId: string },
  ): Promise<{ observation: Observation; conflictsWith: Observation | undefined }[]>;
  /** One observation of the tenant by feedbackId (another tenant's is undefined). */
  get(tenantId: string, feedbackId: string): Promise<Observation | undefined>;
  /**
   * Atomic, serialized per eventId with `append` across processes, and once only per observation:
   * appends the resolution of a *quarantined* observation of `resolution.eventId` and, in the same
   * transaction, sets its status: "reject" makes it rejected; "accept" makes it effective and every
   * effective observation of the event with one of `conflictingOutcomes` superseded (listed in the
   * appended record). An observation already resolved returns the stored resolution
   * (already_resolved) whatever is asked; one that is not quarantined returns its status; one the
   * tenant and event do not hold returns unknown (an event removed meanwhile included: a removal
   * running at the same time removes the resolution with the event). Of concurrent calls on one
   * observation exactly one resolves it. Nothing is half-written.
   */
  resolve(
    resolution: Omit<FeedbackResolution, "superseded">,
    conflictingOutcomes: readonly string[],
  ): Promise<ResolveOutcome>;
  /** The resolutions of one event's observations, in the order they were made. */
  resolutionsForEvent(tenantId: string, eventId: string): Promise<FeedbackResolution[]>;
}
