import type { EventRecord, LedgerFilter, LedgerRow, Observation, Store } from "../../store/interfaces.js";
import type { EventView, LedgerSummary, ObservationView } from "./schema.js";

/** How many quarantined observations a summary lists (newest first). */
export const QUARANTINE_LIST_LIMIT = 100;

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function observationView(o: Observation): ObservationView {
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
  };
}

/**
 * The totals humans read (spec, feedback rules 5 and 6): per outcome, effective and quarantined
 * counts and effective value sums per unit; the ledger dollar total is effective credit_burn in usd
 * only; other units are summed separately and never converted; first-year ARR is effective converted
 * in usd. Quarantined observations never count toward any total.
 */
export function summarise(
  rows: readonly LedgerRow[],
): Omit<LedgerSummary, "tenantId" | "since" | "until" | "action" | "quarantined"> {
  const outcomes: LedgerSummary["outcomes"] = {};
  for (const r of rows) {
    const entry = outcomes[r.outcome] ?? { effective: 0, quarantined: 0, totals: {} };
    outcomes[r.outcome] = entry;
    if (r.status === "quarantined") {
      entry.quarantined += r.count;
      continue;
    }
    entry.effective += r.count;
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

/** One event with its verdict and every observation attached to it, effective and quarantined. */
export async function eventWithObservations(
  store: Store,
  tenantId: string,
  eventId: string,
): Promise<EventView | undefined> {
  const event = await store.events.get(tenantId, eventId);
  if (!event) return undefined;
  const observations = await store.feedback.listForEvent(tenantId, eventId);
  return { event: eventView(event), observations: observations.map(observationView) };
}

function eventView(e: EventRecord): EventView["event"] {
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
    signals: e.signals,
    engineVersion: e.engineVersion,
    policyVersion: e.policyVersion,
  };
}
