import { type CompiledQuery, type RawBuilder, type SqlBool, sql } from "kysely";
import type { CampaignMark, Decision } from "../../domain.js";
import type { AbusiveSetup, EventScope, MarkCount, MarkValue } from "../interfaces.js";
import { effectiveLabels, standsForItsAttempt } from "./attemptLabels.js";
import type { SqlRuntime } from "./runtime.js";

/** The marks read from the event's signals (JSON text); the network has its own column. */
const SIGNAL_MARKS = ["environment", "shape", "tls", "userAgent", "emailDomain"] as const;

type Member = (kind: CampaignMark) => RawBuilder<string | null>;

const memberOf =
  (rt: SqlRuntime): Member =>
  (kind) =>
    kind === "network" ? sql<string | null>`events.network` : rt.jsonMember(sql`events.signals`, kind);

/** The events of the tenant in scope that stand for their attempt (one per attempt, as riskGroups). */
function inScope(tenantId: string, scope: EventScope) {
  const clauses = [
    sql`events.tenant_id = ${tenantId}`,
    sql`events.created_at >= ${scope.since}`,
    sql`events.created_at < ${scope.until}`,
    standsForItsAttempt,
  ];
  if (scope.action !== undefined) clauses.push(sql`events.action = ${scope.action}`);
  return sql.join(clauses, sql` and `);
}

/**
 * The attempts in scope with an effective abuse outcome, newest first, with their marks: from the
 * tenant's effective observations (few) to their events by primary key.
 */
export function abusiveSetupsQuery(
  rt: SqlRuntime,
  tenantId: string,
  scope: EventScope,
  abuseOutcomes: readonly string[],
  limit: number,
): CompiledQuery<Record<string, unknown>> {
  const member = memberOf(rt);
  const labels = effectiveLabels(rt.db, tenantId, abuseOutcomes);
  const marks = sql.join(SIGNAL_MARKS.map((kind) => sql`${member(kind)} as ${sql.id(kind)}`));
  return sql<Record<string, unknown>>`select events.id as id, events.created_at as created_at,
      events.network as network, ${marks}
    from ${labels.as("f")} cross join events
    where events.id = f.event_id and f.abusive = 1 and ${inScope(tenantId, scope)}
    order by events.created_at desc, events.id desc
    limit ${limit}`.compile(rt.db);
}

export function abusiveSetupFromRow(r: Record<string, unknown>): AbusiveSetup {
  const marks: MarkValue[] = [];
  for (const kind of [...SIGNAL_MARKS, "network"] as const) {
    const value = r[kind];
    if (typeof value === "string" && value !== "") marks.push({ kind, value });
  }
  return { eventId: String(r.id), createdAt: Number(r.created_at), marks };
}

/** LIKE's own characters escaped, so the text matches only itself. */
const likeText = (text: string) => text.replace(/[\\%_]/g, "\\$&");

/**
 * Whether the event's signals (written by JSON.stringify: no spaces, rows.ts) can hold this mark's
 * value: a test of the text alone, so the period's events are read without parsing their JSON; the
 * marks of those it keeps are then compared exactly. An email domain's subdomains pass as well.
 */
function mayHold(kind: CampaignMark, values: readonly string[]): RawBuilder<SqlBool> {
  if (kind === "network") return sql<SqlBool>`events.network in (${sql.join(values)})`;
  const patterns = values.map((v) => {
    const json = JSON.stringify(v);
    const text =
      kind === "emailDomain" ? `"${kind}":"%${likeText(json.slice(1))}` : likeText(`"${kind}":${json}`);
    return sql<SqlBool>`events.signals like ${`%${text}%`} escape '\\'`;
  });
  return sql<SqlBool>`(${sql.join(patterns, sql` or `)})`;
}

/** An email domain, or one of its subdomains (as a deny list's emailDomains match). */
const withinDomain = (domain: string, listed: string) => domain === listed || domain.endsWith(`.${listed}`);

/**
 * The period's attempts bearing any of `marks`, grouped by the marks they bear, the engine's decision
 * and their labels, in one read of the period's events (the tenant's time index), then counted per
 * mark here. The groups are few: a campaign's attempts share most of their marks.
 */
export function markCountsQuery(
  rt: SqlRuntime,
  tenantId: string,
  scope: EventScope,
  byKind: ReadonlyMap<CampaignMark, readonly string[]>,
  outcomes: { abuse: readonly string[]; good: readonly string[] },
): CompiledQuery<Record<string, unknown>> {
  const member = memberOf(rt);
  const kinds = [...byKind.keys()];
  const column = (kind: CampaignMark) => sql.id(`m_${kind}`);
  // Exact kinds keep the member only when it is one of the values; an email domain keeps the domain
  // found, and its candidates are matched to it here (subdomains included).
  const marks = sql.join(
    kinds.map((kind) => {
      const values = byKind.get(kind) ?? [];
      const keep =
        kind === "emailDomain"
          ? mayHold(kind, values)
          : sql<SqlBool>`${member(kind)} in (${sql.join(values)})`;
      return sql`case when ${keep} then ${member(kind)} end as ${column(kind)}`;
    }),
  );
  const any = sql.join(
    kinds.map((kind) => mayHold(kind, byKind.get(kind) ?? [])),
    sql` or `,
  );
  const labels = effectiveLabels(rt.db, tenantId, outcomes.abuse, outcomes.good);
  const grouped = sql.join(kinds.map(column));
  return sql<Record<string, unknown>>`select ${grouped}, x.decision as decision, x.abusive as abusive,
      x.good as good, count(*) as n, min(x.created_at) as first_seen, max(x.created_at) as last_seen
    from (
      select ${marks}, events.would_be_decision as decision, coalesce(l.abusive, 0) as abusive,
        coalesce(l.good, 0) as good, events.created_at as created_at
      from events left join ${labels.as("l")} on l.event_id = events.id
      where ${inScope(tenantId, scope)} and (${any})
    ) x
    group by ${grouped}, x.decision, x.abusive, x.good`.compile(rt.db);
}

/** The grouped rows as one count per mark, decision (and nothing for marks no attempt bore). */
export function markCountsFromRows(
  rows: readonly Record<string, unknown>[],
  byKind: ReadonlyMap<CampaignMark, readonly string[]>,
): MarkCount[] {
  const counts = new Map<string, MarkCount>();
  for (const r of rows) {
    const n = Number(r.n);
    const abusive = Number(r.abusive) === 1;
    const good = !abusive && Number(r.good) === 1;
    const decision = r.decision as Decision;
    for (const [kind, values] of byKind) {
      const found = r[`m_${kind}`];
      if (typeof found !== "string") continue;
      const matched =
        kind === "emailDomain"
          ? values.filter((v) => withinDomain(found, v))
          : values.includes(found)
            ? [found]
            : [];
      for (const value of matched) {
        const at = `${kind}\n${value}\n${decision}`;
        const count = counts.get(at) ?? {
          kind,
          value,
          decision,
          events: 0,
          abusive: 0,
          good: 0,
          firstSeen: Number.POSITIVE_INFINITY,
          lastSeen: Number.NEGATIVE_INFINITY,
        };
        count.events += n;
        if (abusive) count.abusive += n;
        if (good) count.good += n;
        count.firstSeen = Math.min(count.firstSeen, Number(r.first_seen));
        count.lastSeen = Math.max(count.lastSeen, Number(r.last_seen));
        counts.set(at, count);
      }
    }
  }
  return [...counts.values()];
}

/** The marks asked for, by kind, each value once. */
export function marksByKind(marks: readonly MarkValue[]): Map<CampaignMark, string[]> {
  const byKind = new Map<CampaignMark, string[]>();
  for (const { kind, value } of marks) {
    const values = byKind.get(kind) ?? [];
    if (!values.includes(value)) values.push(value);
    byKind.set(kind, values);
  }
  return byKind;
}
