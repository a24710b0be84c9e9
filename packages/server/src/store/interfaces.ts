/**
 * Storage contract. Every adapter (SQLite now, PostgreSQL in the scale-out work) implements these
 * interfaces and passes store/contract.test.ts against a real database.
 *
 * Guarantees are stated per method. "Atomic" means the method is one transaction (or one statement)
 * whose effect is all-or-nothing and correct when many processes share one database.
 * Stores hold no business rules beyond those guarantees.
 * The vocabulary the records are written in (decisions, actor types, the event record…) is domain.ts.
 *
 * Every method may reject with StoreUnavailableError when the database cannot answer in time.
 */

import type {
  ActorType,
  AttemptEnding,
  CampaignMark,
  ChallengeMethod,
  Decider,
  Decision,
  EnforcementMode,
  EventRecord,
  ObservationStatus,
  RecordedRisk,
  Resolution,
  Scope,
} from "../domain.js";

export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/**
 * The database answered and refused this write for what it holds (a constraint, a value it cannot
 * store): trying it again cannot succeed. A StoreUnavailableError still, so request paths answer it
 * like any store fault; queues that retry (the degraded-event queue) drop it instead of retrying.
 */
export class StoreRejectedError extends StoreUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreRejectedError";
  }
}

export interface Tenant {
  id: string;
  rawPii: boolean;
  logOnly: boolean;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  scopes: Scope[];
  logOnly: boolean;
  createdAt: number;
  revokedAt: number | null;
}

export interface TenantStore {
  /** Atomic: creates the tenant; resolves false (and changes nothing) when the id exists. */
  create(tenant: Tenant): Promise<boolean>;
  get(id: string): Promise<Tenant | undefined>;
  list(): Promise<Tenant[]>;
  count(): Promise<number>;
  /** Sets (or with null removes) the tenant's payment-provider secret key; false for an unknown tenant. */
  setPaymentKey(id: string, secretKey: string | null): Promise<boolean>;
  /** The tenant's payment-provider secret key, if one is configured. */
  paymentKey(id: string): Promise<string | undefined>;
}

export interface ApiKeyStore {
  /** Stores a key by the hash of its secret; the secret itself is never given to the store. */
  create(record: ApiKeyRecord, keyHash: string): Promise<void>;
  /** The key and its tenant for a secret's hash, or undefined. Revoked keys are returned with revokedAt set. */
  findByHash(keyHash: string): Promise<{ key: ApiKeyRecord; tenant: Tenant } | undefined>;
  list(tenantId: string): Promise<ApiKeyRecord[]>;
  /** Atomic: marks the key revoked; resolves false when the key is unknown or already revoked. */
  revoke(keyId: string, at: number): Promise<boolean>;
  /** Whether the key exists and is not revoked, read now. */
  isActive(keyId: string): Promise<boolean>;
}

export interface SigningKeyRecord {
  kid: string;
  /** Private JWK (ES256) as JSON text. */
  privateJwk: string;
  publicJwk: string;
  createdAt: number;
  /** Set when the key stops signing; it stays published until publishUntil. */
  retiredAt: number | null;
  publishUntil: number | null;
}

export interface SigningKeyStore {
  /** Keys still published at `now` (not retired, or retired with publishUntil > now), newest first. */
  listPublished(now: number): Promise<SigningKeyRecord[]>;
  /**
   * Atomic: inserts `next` and retires every other active key (publishUntil = now + keep), in one
   * transaction, so there is exactly one signer after any number of concurrent rotations finish.
   */
  rotate(next: SigningKeyRecord, keepPublishedMs: number): Promise<void>;
  /** Atomic: inserts `first` only when no active key exists; resolves whether it was inserted. */
  insertIfNone(first: SigningKeyRecord): Promise<boolean>;
}

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

export interface IdempotentResponse {
  fingerprint: string;
  statusCode: number;
  body: unknown;
}

export interface IdempotencyKey {
  tenantId: string;
  operation: string;
  key: string;
}

export type RecordOutcome =
  | { kind: "recorded" }
  | { kind: "replay"; response: IdempotentResponse }
  | { kind: "conflict" }
  /** Asked for `activeKey` and the event's API key is revoked (or gone): nothing was written. */
  | { kind: "key_revoked" }
  /** Asked to `redeem` a clear that could not be redeemed (any condition failed): nothing was written. */
  | { kind: "not_redeemed" };

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
   * ("not_redeemed"). A clear is therefore spent only together with the answer that honours it: an
   * aborted or failed record leaves it redeemable, and of concurrent calls exactly one redeems it.
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

export interface IdempotencyStore {
  /** The live response stored under the key, if any (a read-only fast path; `record` decides races). */
  find(key: IdempotencyKey, now: number): Promise<IdempotentResponse | undefined>;
  purgeExpired(now: number): Promise<number>;
}

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
  /** The provider object that proved the clear (a SetupIntent id); unique across challenges. */
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
}

/** A public key of an agent operator: its JWK (public members only) and RFC 7638 SHA-256 thumbprint. */
export interface AgentKeyRecord {
  thumbprint: string;
  alg: "ed25519" | "rsa-pss-sha512";
  jwk: Record<string, unknown>;
}

/** A known agent operator (Web Bot Auth): the registry is global, shared by every tenant. */
export interface AgentOperatorRecord {
  operator: string;
  /** The Signature-Agent URL the operator's requests carry. */
  signatureAgent: string;
  /** Keys given by the operator (a JWKS file); empty when only its key directory is used. */
  keys: AgentKeyRecord[];
  /** Whether Warden may fetch the operator's key directory for keys not given here. */
  fetchDirectory: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A put refused because one of its keys is already another operator's (a key names one operator). */
export type AgentPutResult = { ok: true } | { ok: false; thumbprint: string; operator: string };

export interface AgentStore {
  /**
   * Atomic: creates the operator's entry or replaces it (createdAt is kept on replace), unless one of
   * its keys is stored for another operator; then nothing is written. Concurrent puts of one key for
   * two operators store it for one of them.
   */
  put(record: AgentOperatorRecord): Promise<AgentPutResult>;
  /** Resolves false when no such operator is registered. */
  remove(operator: string): Promise<boolean>;
  list(): Promise<AgentOperatorRecord[]>;
}

/** One version of a tenant's policy document (validated before it is stored). */
export interface TenantPolicyRecord {
  tenantId: string;
  version: number;
  /** The document as JSON text, exactly as validated. */
  document: string;
  createdAt: number;
}

export interface PolicyStore {
  /**
   * Atomic: stores `document` as the tenant's next version (one more than the highest), so concurrent
   * sets from several processes get distinct versions and none is lost. Resolves the version.
   */
  put(tenantId: string, document: string, now: number): Promise<number>;
  /**
   * Atomic: stores `document` as version `basedOn + 1` only while the tenant's highest version is
   * `basedOn` (0: it never set one), so a change made from a version read earlier never overwrites
   * one stored since. Resolves the new version, or undefined when the tenant's version is not `basedOn`.
   */
  putIfCurrent(tenantId: string, document: string, basedOn: number, now: number): Promise<number | undefined>;
  /** The tenant's highest version, if it ever set one. */
  current(tenantId: string): Promise<TenantPolicyRecord | undefined>;
}

/** Events of one tenant created in [since, until), optionally of one action. */
export interface EventScope {
  since: number;
  until: number;
  action?: string;
}
/** Events of one hour or UTC day and one combination of what the overview breaks decisions down by. */
export interface DecisionCount {
  bucketStart: number;
  action: string;
  decision: Decision;
  actorType: ActorType;
  degraded: boolean;
  enforcementMode: EnforcementMode;
  count: number;
}
/** Challenges of one method issued in the scope, by where they ended up at `now`. */
export interface ChallengeCount {
  method: ChallengeMethod;
  issued: number;
  cleared: number;
  expired: number;
  redeemed: number;
}
/** Attempts whose first verdict fell in one hour or UTC day, by action and how they ended. */
export interface AttemptCount {
  bucketStart: number;
  action: string;
  ending: AttemptEnding;
  /** Whether the first verdict was degraded (the store could not score it). */
  degraded: boolean;
  count: number;
}
/** The events of one attempt: its first verdict and the re-verify that redeemed its clear, if any. */
export interface AttemptEvents {
  firstEventId: string;
  reverifyEventId: string | null;
}
/** Events sharing everything the decision rule replays (and, for labelled ones, their label). */
export interface RiskGroup {
  action: string;
  risk: RecordedRisk | null;
  actorType: ActorType;
  decidedBy: Decider;
  /** The engine's decision (wouldBeDecision: before log_only turned it into an allow). */
  decision: Decision;
  count: number;
}
export interface LabelledRiskGroup extends RiskGroup {
  /** One of the events' effective outcomes is an abuse outcome. */
  abusive: boolean;
}
/** One value of one of an attempt's marks (CAMPAIGN_MARKS): what a campaign's attempts can share. */
export interface MarkValue {
  kind: CampaignMark;
  value: string;
}
/** An attempt labelled abusive, with the marks its event recorded. */
export interface AbusiveSetup {
  eventId: string;
  createdAt: number;
  marks: MarkValue[];
}
/** Attempts in scope bearing one mark's value, by the engine's decision and label. */
export interface MarkCount extends MarkValue {
  decision: Decision;
  events: number;
  /** Of them, attempts with an effective abuse outcome. */
  abusive: number;
  /** Of them, attempts with an effective good outcome and none of abuse. */
  good: number;
  firstSeen: number;
  lastSeen: number;
}
/** Events with effective observations of one outcome, by the engine's decision on them. */
export interface OutcomeCount {
  decision: Decision;
  outcome: string;
  events: number;
  observations: number;
}
/** An event as the console's lists show it (InsightStore.listEvents). */
export type EventListItem = Pick<
  EventRecord,
  | "id"
  | "createdAt"
  | "action"
  | "surface"
  | "session"
  | "decision"
  | "wouldBeDecision"
  | "actorType"
  | "confidence"
  | "degraded"
  | "enforcementMode"
> & {
  /** The recorded risk estimate; null when nothing was scored. */
  riskEstimate: number | null;
};
/** Events in a scope that gave one reason code, with one decision. */
export interface ReasonCount {
  code: string;
  decision: Decision;
  count: number;
}
/** Newest first: events created before the cursor event (createdAt, then id, descending). */
export interface EventListFilter extends EventScope {
  session?: string;
  decision?: Decision;
  actorType?: ActorType;
  emailHash?: string;
  network?: string;
  /** Events whose verdict gave this reason code (events recorded before 0012_event_search have none). */
  reasonCode?: string;
  degraded?: boolean;
  before?: { createdAt: number; id: string };
}
/**
 * Told how long each statement of a read took in the store, in milliseconds (SQLite: on the read
 * worker, its queue not counted; PostgreSQL: in its read slot, the waits for a connection and a slot
 * not counted): the console's read budget charges it. `holder` names whose reads they are (an API
 * key's id): on PostgreSQL one holder's reads go to the database one at a time per process
 * (postgres/readSlots.ts).
 */
export interface ReadMeter {
  (storeMs: number): void;
  readonly holder?: string;
}

/**
 * The console's reads. Long scans run off the request path (SQLite: on the read worker's own
 * connection), so they never hold up verify. Read-only: no method changes anything. Those that scan
 * take a ReadMeter last.
 */
export interface InsightStore {
  /** Counts per hour (or UTC day) and combination, oldest first; only non-zero combinations. */
  decisionCounts(
    tenantId: string,
    scope: EventScope,
    bucket: "hour" | "day",
    meter?: ReadMeter,
  ): Promise<DecisionCount[]>;
  /**
   * Attempts per hour (or UTC day) of their first verdict, by action and ending, oldest first; only
   * non-zero combinations. A re-verify that redeemed a clear is part of its attempt, never one itself.
   */
  attemptCounts(
    tenantId: string,
    scope: EventScope,
    bucket: "hour" | "day",
    meter?: ReadMeter,
  ): Promise<AttemptCount[]>;
  /** The attempt event `eventId` belongs to (whichever of its events it is); undefined for no such event. */
  attemptOf(tenantId: string, eventId: string): Promise<AttemptEvents | undefined>;
  /** Challenges issued in [since, until) (on events of `action` when given), by method. */
  challengeCounts(
    tenantId: string,
    scope: EventScope,
    now: number,
    meter?: ReadMeter,
  ): Promise<ChallengeCount[]>;
  /**
   * At most `limit` events, newest first, as lists show them: without reasons, costs, signals or
   * the principal, so a 50,000-row export brings a fifth of the bytes to the event loop and no JSON
   * to parse.
   */
  listEvents(
    tenantId: string,
    filter: EventListFilter,
    limit: number,
    meter?: ReadMeter,
  ): Promise<EventListItem[]>;
  /**
   * Where the list's events from `offset` on sit (at most `count`, in listEvents' order): their time
   * and id only. An export names the cursor after its last row before it streams the rows.
   */
  eventPositions(
    tenantId: string,
    filter: EventListFilter,
    offset: number,
    count: number,
    meter?: ReadMeter,
  ): Promise<{ createdAt: number; id: string }[]>;
  /**
   * Events in scope per reason code and decision (an event counts once per code it gave), largest
   * first; events recorded before 0012_event_search carry no codes.
   */
  reasonCounts(tenantId: string, scope: EventScope, meter?: ReadMeter): Promise<ReasonCount[]>;
  /** Every action the tenant has events for, in order. */
  knownActions(tenantId: string, meter?: ReadMeter): Promise<string[]>;
  /** The challenges issued on one event, oldest first. */
  challengesForEvent(tenantId: string, eventId: string): Promise<ChallengeRecord[]>;
  /**
   * Every attempt in scope, grouped by what replaying its decision needs: one event per attempt, the
   * one holding its first scored verdict (a re-verify that redeemed a clear is not an attempt).
   */
  riskGroups(tenantId: string, scope: EventScope, meter?: ReadMeter): Promise<RiskGroup[]>;
  /**
   * Attempts in scope with at least one effective observation on any of their events, grouped
   * likewise and by label.
   */
  labelledRiskGroups(
    tenantId: string,
    scope: EventScope,
    abuseOutcomes: readonly string[],
    meter?: ReadMeter,
  ): Promise<LabelledRiskGroup[]>;
  /** Effective outcomes on attempts in scope (on any of their events), by the engine's decision. */
  outcomeCounts(tenantId: string, scope: EventScope, meter?: ReadMeter): Promise<OutcomeCount[]>;
  /**
   * The attempts in scope labelled abusive (an effective abuse outcome on any of their events), newest
   * first, at most `limit`, with their marks: where the campaigns start (labels are few).
   */
  abusiveSetups(
    tenantId: string,
    scope: EventScope,
    abuseOutcomes: readonly string[],
    limit: number,
    meter?: ReadMeter,
  ): Promise<AbusiveSetup[]>;
  /**
   * Attempts in scope bearing each of `marks` (one event per attempt, as riskGroups), by the engine's
   * decision and with their labels. An email domain counts its subdomains too, as a deny list matches
   * them. Reads the period's events once, keeping those whose signals hold one of the values.
   */
  markCounts(
    tenantId: string,
    scope: EventScope,
    marks: readonly MarkValue[],
    outcomes: { abuse: readonly string[]; good: readonly string[] },
    meter?: ReadMeter,
  ): Promise<MarkCount[]>;
}
/** A console sign-in, known by the SHA-256 of its cookie's secret. */
export interface ConsoleSession {
  idHash: string;
  tenantId: string;
  keyId: string;
  createdAt: number;
  expiresAt: number;
}
export interface ConsoleSessionStore {
  create(session: ConsoleSession): Promise<void>;
  /**
   * The session with the key it was opened with, when the session has not expired at `now`; a
   * revoked key's sessions are returned with the key's revokedAt set (the caller refuses them).
   */
  find(
    idHash: string,
    now: number,
  ): Promise<{ session: ConsoleSession; key: ApiKeyRecord; tenant: Tenant } | undefined>;
  /** Ends the session; resolves whether it existed. */
  delete(idHash: string): Promise<boolean>;
  /** Deletes expired sessions; resolves how many. */
  purgeExpired(now: number): Promise<number>;
}
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

/** What the routes off verify's path read and count besides their own areas (Store.patient). */
export interface PatientCalls {
  readonly apiKeys: Pick<ApiKeyStore, "findByHash">;
  readonly counters: Pick<CounterStore, "hit">;
  readonly idempotency: Pick<IdempotencyStore, "find">;
}

export interface Store {
  readonly tenants: TenantStore;
  readonly apiKeys: ApiKeyStore;
  readonly signingKeys: SigningKeyStore;
  readonly counters: CounterStore;
  readonly events: EventStore;
  readonly idempotency: IdempotencyStore;
  readonly feedback: FeedbackStore;
  readonly challenges: ChallengeStore;
  readonly agents: AgentStore;
  readonly policies: PolicyStore;
  readonly insights: InsightStore;
  readonly consoleSessions: ConsoleSessionStore;
  readonly removal: EventRemovalStore;
  /**
   * The key lookups, counters and idempotent replays of the routes off verify's 50 ms path
   * (challenge, feedback, the console and its sign-in): the same data as `apiKeys`, `counters` and
   * `idempotency`, with statements that may wait for a busy database (PostgreSQL: the patient pool
   * and its timeout), so that a database too slow for verify's deadline does not refuse them. Verify
   * and the page tokens use the others. SQLite: the same stores.
   */
  readonly patient: PatientCalls;
  /** Resolves when the store can take writes (a write probe: readiness, GET /readyz); rejects otherwise. */
  ping(): Promise<void>;
  /**
   * Readies what the request path uses before the first request needs it, writing nothing: opens the
   * connections a pool keeps (PostgreSQL: its minimum, each answering a read) and loads Redis's
   * counter script. Rejects like `ping` when a server is unreachable; the caller carries on.
   */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}
