import type { EventRecord } from "../../domain.js";
import type {
  ChallengeRecord,
  FeedbackResolution,
  LedgerFilter,
  LedgerRow,
  Observation,
  Store,
} from "../../store/interfaces.js";
import { type TokenSettings, verdictPayload } from "../../tokens/verdictToken.js";
import { NO_PRINCIPAL } from "../verify/verdict.js";
import type { EventView, LedgerSummary, ObservationView, ResolutionRecord } from "./schema.js";

/** How many quarantined observations a summary lists (newest first). */
export const QUARANTINE_LIST_LIMIT = 100;

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function resolutionRecord(r: FeedbackResolution): ResolutionRecord {
  return {
    resolution: r.resolution,
    note: r.note,
    resolvedBy: r.keyId,
    resolvedAt: new Date(r.resolvedAt).toISOString(),
    superseded: r.superseded,
  };
}

/** An observation as the API shows it, with its resolution, or what superseded it, when `resolutions` hold one. */
export function observationView(
  o: Observation,
  resolutions: readonly FeedbackResolution[] = [],
): ObservationView {
  const own = resolutions.find((r) => r.feedbackId === o.feedbackId);
  const by = resolutions.find((r) => r.superseded.includes(o.feedbackId));
  return {
    feedbackId: o.feedbackId,
    eventId: o.eventId,
    outcome: o.outcome,
    value: o.value,
    unit: o.unit,
    source: o.source,
    observedAt: new Date(o.observedAt).toISOString(),
    receivedAt: new Date(o.receivedAt).toISOString(),
    status: o.status,
    conflictsWith: o.conflictsWith,
    resolution: own ? resolutionRecord(own) : null,
    supersededBy: by ? by.feedbackId : null,
  };
}

/**
 * The totals humans read (docs/api.md#post-v1feedback-and-the-ledger): per outcome, counts by status and effective
 * value sums per unit; the ledger dollar total is effective credit_burn in usd only; other units are
 * summed separately and never converted; first-year ARR is effective converted in usd. Only effective
 * observations (accepted ones included) count toward a total: quarantined, rejected and superseded
 * ones never do.
 */
export function summarise(
  rows: readonly LedgerRow[],
): Omit<LedgerSummary, "tenantId" | "since" | "until" | "action" | "quarantined"> {
  const outcomes: LedgerSummary["outcomes"] = {};
  for (const r of rows) {
    const entry = outcomes[r.outcome] ?? {
      effective: 0,
      quarantined: 0,
      rejected: 0,
      superseded: 0,
      totals: {},
    };
    outcomes[r.outcome] = entry;
    entry[r.status] += r.count;
    if (r.status !== "effective") continue;
    if (r.unit !== null) entry.totals[r.unit] = (entry.totals[r.unit] ?? 0) + r.total;
  }
  const burn = outcomes.credit_burn?.totals ?? {};
  const { usd: burnUsd = 0, ...burnOther } = burn;
  return {
    outcomes,
    ledgerUsdTotal: burnUsd,
    creditBurnOtherUnits: burnOther,
    firstYearArrUsd: outcomes.converted?.totals.usd ?? 0,
  };
}

export async function ledgerSummary(
  store: Store,
  tenantId: string,
  filter: LedgerFilter,
): Promise<LedgerSummary> {
  const [rows, quarantined] = await Promise.all([
    store.feedback.aggregate(tenantId, filter),
    store.feedback.quarantined(tenantId, filter, QUARANTINE_LIST_LIMIT),
  ]);
  return {
    tenantId,
    since: iso(filter.since),
    until: iso(filter.until),
    action: filter.action ?? null,
    ...summarise(rows),
    quarantined: quarantined.map((q) => ({
      observation: observationView(q.observation),
      conflictsWith: q.conflictsWith ? observationView(q.conflictsWith) : null,
    })),
  };
}

/** One event with its verdict, the challenges issued on it and every observation attached to it. */
export async function eventWithObservations(
  store: Store,
  tokens: TokenSettings,
  tenantId: string,
  eventId: string,
): Promise<EventView | undefined> {
  const event = await store.events.get(tenantId, eventId);
  if (!event) return undefined;
  const [challenges, observations, resolutions] = await Promise.all([
    store.insights.challengesForEvent(tenantId, eventId),
    store.feedback.listForEvent(tenantId, eventId),
    store.feedback.resolutionsForEvent(tenantId, eventId),
  ]);
  return {
    event: eventView(event, tokens),
    challenges: challenges.map(challengeView),
    observations: observations.map((o) => observationView(o, resolutions)),
  };
}

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function challengeView(c: ChallengeRecord): EventView["challenges"][number] {
  return {
    challengeId: c.id,
    method: c.method,
    boundTo: c.session,
    difficulty: c.difficulty,
    issuedAt: new Date(c.issuedAt).toISOString(),
    expiresAt: new Date(c.expiresAt).toISOString(),
    clearedAt: isoOrNull(c.clearedAt),
    redeemedAt: isoOrNull(c.redeemedAt),
  };
}

function eventView(e: EventRecord, tokens: TokenSettings): EventView["event"] {
  const { principal, ...signals } = e.signals;
  return {
    eventId: e.id,
    createdAt: new Date(e.createdAt).toISOString(),
    action: e.action,
    surface: e.surface,
    session: e.session,
    decision: e.decision,
    wouldBeDecision: e.wouldBeDecision,
    actorType: e.actorType,
    confidence: e.confidence,
    reasons: e.reasons,
    degraded: e.degraded,
    enforcementMode: e.enforcementMode,
    costs: e.costs,
    signals,
    engineVersion: e.engineVersion,
    policyVersion: e.policyVersion,
    decidedBy: e.decidedBy,
    // Events recorded before the principal was kept with them resolved nobody as far as is known.
    principal: (principal as EventView["event"]["principal"] | undefined) ?? NO_PRINCIPAL,
    tokenClaims: verdictPayload(
      tokens,
      {
        tenantId: e.tenantId,
        eventId: e.id,
        session: e.session,
        action: e.action,
        decision: e.decision,
        actorType: e.actorType,
        degraded: e.degraded,
        ...(e.decidedBy === "clear" && e.decision === "allow" ? { challengeCleared: true as const } : {}),
      },
      e.createdAt,
    ),
  };
}
