/**
 * The store contract, the console's reads (InsightStore). Each method states its guarantees;
 * "atomic" is as store/interfaces.ts defines it.
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
  RecordedRisk,
} from "../../domain.js";
import type { ChallengeRecord } from "./challenges.js";

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
