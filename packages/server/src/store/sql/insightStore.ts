import { type CompiledQuery, type ExpressionBuilder, sql } from "kysely";
import {
  type ActorType,
  ATTEMPT_ENDINGS,
  type AttemptEnding,
  type ChallengeMethod,
  type Decider,
  type Decision,
  type EnforcementMode,
} from "../../domain.js";
import type {
  AttemptCount,
  ChallengeCount,
  DecisionCount,
  EventListItem,
  InsightStore,
  LabelledRiskGroup,
  OutcomeCount,
  ReadMeter,
  RiskGroup,
} from "../interfaces.js";
import type { Database } from "../schema.js";
import { effectiveLabels, movedToAttempt, standsForItsAttempt } from "./attemptLabels.js";
import {
  abusiveSetupFromRow,
  abusiveSetupsQuery,
  markCountsFromRows,
  markCountsQuery,
  marksByKind,
} from "./campaignQueries.js";
import { eventListQuery, knownActionsQuery, reasonCountFromRow, reasonCountsQuery } from "./eventSearch.js";
import { challengeFromRow, guard } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

const HOUR_MS = 3_600_000;
/**
 * The hour of an event, written exactly as in the events_hourly index (migrations.ts, 0008) so the
 * database reads that index in order and groups while it scans.
 */
const hourOf = sql<number>`(created_at / 3600000)`;

/**
 * The console's reads (InsightStore). Every aggregate runs through `rt.report` (SQLite: the read
 * worker's own connection), and each is shaped to be answered from one index: see the indexes of
 * migration 0008_console and docs/console.md, "Performance".
 */
export function createInsightStore(rt: SqlRuntime): InsightStore {
  const { db } = rt;
  // Each statement's time in the store goes to the read's meter (the console's read budget).
  const metered =
    (meter: ReadMeter | undefined) =>
    <R>(query: CompiledQuery<R>) =>
      rt.report(query, meter);
  return {
    decisionCounts: (tenantId, scope, bucket, meter) =>
      guard("insights.decisionCounts", async () => {
        let hourly = db
          .selectFrom("events")
          .select((eb) => [
            hourOf.as("hour"),
            "action",
            "decision",
            "actor_type",
            "degraded",
            "enforcement_mode",
            eb.fn.countAll<number>().as("count"),
          ])
          .where("tenant_id", "=", tenantId)
          .where(hourOf, ">=", Math.floor(scope.since / HOUR_MS))
          .where(hourOf, "<=", Math.floor((scope.until - 1) / HOUR_MS))
          .where("created_at", ">=", scope.since)
          .where("created_at", "<", scope.until);
        if (scope.action !== undefined) hourly = hourly.where("action", "=", scope.action);
        hourly = hourly.groupBy([hourOf, "action", "decision", "actor_type", "degraded", "enforcement_mode"]);
        const keys = ["h.action", "h.decision", "h.actor_type", "h.degraded", "h.enforcement_mode"] as const;
        // Days are summed from the hours by the database too (UTC days): only the result crosses over.
        const perBucket = sql<number>`h.hour / ${sql.lit(bucket === "day" ? 24 : 1)}`;
        const rows = await metered(meter)(
          db
            .selectFrom(hourly.as("h"))
            .select((eb) => [perBucket.as("bucket"), ...keys, eb.fn.sum<number>("h.count").as("count")])
            .groupBy([perBucket, ...keys])
            .orderBy("bucket")
            .compile(),
        );
        const width = bucket === "day" ? 24 * HOUR_MS : HOUR_MS;
        return rows.map(
          (r): DecisionCount => ({
            bucketStart: Number(r.bucket) * width,
            action: r.action,
            decision: r.decision as Decision,
            actorType: r.actor_type as ActorType,
            degraded: Number(r.degraded) === 1,
            enforcementMode: r.enforcement_mode as EnforcementMode,
            count: Number(r.count),
          }),
        );
      }),

    attemptCounts: (tenantId, scope, bucket, meter) =>
      guard("insights.attemptCounts", async () => {
        // Every event by its first-verdict columns (the events_hourly index alone), then the clears:
        // each redeemed clear turns its challenged first verdict into "cleared" (or "denied", when
        // the re-verify a degraded verdict's clear let be scored was a deny), and its re-verify is
        // taken out of its own decision's count, as part of that attempt. Clears are few; each is
        // read with its two events by primary key, so verify's insert keeps the indexes it has.
        const inScope = (t: "e" | "root" | "r") => {
          const at = sql.ref(`${t}.created_at`);
          const clauses = [
            sql`(${at} / 3600000) >= ${Math.floor(scope.since / HOUR_MS)}`,
            sql`(${at} / 3600000) <= ${Math.floor((scope.until - 1) / HOUR_MS)}`,
            sql`${at} >= ${scope.since}`,
            sql`${at} < ${scope.until}`,
          ];
          if (scope.action !== undefined) clauses.push(sql`${sql.ref(`${t}.action`)} = ${scope.action}`);
          return sql.join(clauses, sql` and `);
        };
        type Row = { hour: number; action: string; degraded: number; count: number };
        type Ended = Row & { decision: Decision | null };
        const [all, clears, again] = await Promise.all([
          metered(meter)(
            sql<Row & { decision: Decision }>`select (e.created_at / 3600000) as hour, e.action, e.decision,
              e.degraded, count(*) as count from events e where e.tenant_id = ${tenantId} and ${inScope("e")}
              group by (e.created_at / 3600000), e.action, e.decision, e.degraded`.compile(db),
          ),
          metered(meter)(
            sql<Ended>`select (root.created_at / 3600000) as hour, root.action, root.degraded,
              r.decision, count(*) as count
              from event_clears c join events root on root.id = c.event_id
              left join events r on r.id = c.reverify_event_id
              where c.tenant_id = ${tenantId} and ${inScope("root")}
              group by (root.created_at / 3600000), root.action, root.degraded, r.decision`.compile(db),
          ),
          metered(meter)(
            sql<Ended>`select (r.created_at / 3600000) as hour, r.action, r.degraded, r.decision,
              count(*) as count
              from event_clears c join events r on r.id = c.reverify_event_id
              where c.tenant_id = ${tenantId} and ${inScope("r")}
              group by (r.created_at / 3600000), r.action, r.degraded, r.decision`.compile(db),
          ),
        ]);
        const width = bucket === "day" ? 24 * HOUR_MS : HOUR_MS;
        const counts = new Map<string, AttemptCount>();
        const add = (hour: unknown, action: string, ending: AttemptEnding, degraded: unknown, n: unknown) => {
          const bucketStart = Math.floor((Number(hour) * HOUR_MS) / width) * width;
          const at = `${bucketStart}\n${action}\n${ending}\n${Number(degraded)}`;
          const row = counts.get(at) ?? {
            bucketStart,
            action,
            ending,
            degraded: Number(degraded) === 1,
            count: 0,
          };
          row.count += Number(n);
          counts.set(at, row);
        };
        const endingOf = { allow: "allowed", challenge: "challenged", deny: "denied" } as const;
        for (const r of all) add(r.hour, r.action, endingOf[r.decision as Decision], r.degraded, r.count);
        for (const r of clears) {
          add(r.hour, r.action, "challenged", r.degraded, -Number(r.count));
          add(r.hour, r.action, r.decision === "deny" ? "denied" : "cleared", r.degraded, r.count);
        }
        for (const r of again) {
          add(r.hour, r.action, endingOf[r.decision ?? "allow"], r.degraded, -Number(r.count));
        }
        return [...counts.values()]
          .filter((r) => r.count > 0)
          .sort(
            (a, b) =>
              a.bucketStart - b.bucketStart ||
              a.action.localeCompare(b.action) ||
              ATTEMPT_ENDINGS.indexOf(a.ending) - ATTEMPT_ENDINGS.indexOf(b.ending) ||
              Number(a.degraded) - Number(b.degraded),
          );
      }),

    attemptOf: (tenantId, eventId) =>
      guard("insights.attemptOf", async () => {
        const row = await db
          .selectFrom("events as e")
          .leftJoin("event_clears as r", (j) =>
            j.onRef("r.tenant_id", "=", "e.tenant_id").onRef("r.reverify_event_id", "=", "e.id"),
          )
          .leftJoin("event_clears as c", (j) =>
            j.onRef("c.tenant_id", "=", "e.tenant_id").onRef("c.event_id", "=", "e.id"),
          )
          .select(["e.id", "r.event_id as first_event_id", "c.reverify_event_id"])
          .where("e.tenant_id", "=", tenantId)
          .where("e.id", "=", eventId)
          .executeTakeFirst();
        if (!row) return undefined;
        return row.first_event_id !== null
          ? { firstEventId: row.first_event_id, reverifyEventId: row.id }
          : { firstEventId: row.id, reverifyEventId: row.reverify_event_id ?? null };
      }),

    challengeCounts: (tenantId, scope, now, meter) =>
      guard("insights.challengeCounts", async () => {
        const count = (
          eb: ExpressionBuilder<{ c: Database["challenges"] }, "c">,
          when: ReturnType<typeof sql>,
        ) => eb.fn.sum<number>(sql`case when ${when} then 1 else 0 end`);
        let qb = db
          .selectFrom("challenges as c")
          .select((eb) => [
            "c.method",
            eb.fn.countAll<number>().as("issued"),
            count(eb, sql`c.cleared_at is not null`).as("cleared"),
            count(eb, sql`c.cleared_at is null and c.expires_at <= ${now}`).as("expired"),
            count(eb, sql`c.redeemed_at is not null`).as("redeemed"),
          ])
          .where("c.tenant_id", "=", tenantId)
          .where("c.issued_at", ">=", scope.since)
          .where("c.issued_at", "<", scope.until);
        if (scope.action !== undefined) {
          const action = scope.action;
          qb = qb.where(({ exists, selectFrom }) =>
            exists(
              selectFrom("events as e")
                .select("e.id")
                .whereRef("e.id", "=", "c.event_id")
                .where("e.action", "=", action),
            ),
          );
        }
        const rows = await metered(meter)(qb.groupBy("c.method").orderBy("c.method").compile());
        return rows.map(
          (r): ChallengeCount => ({
            method: r.method as ChallengeMethod,
            issued: Number(r.issued),
            cleared: Number(r.cleared),
            expired: Number(r.expired),
            redeemed: Number(r.redeemed),
          }),
        );
      }),

    listEvents: (tenantId, filter, limit, meter) =>
      guard("insights.listEvents", async () => {
        const rows = await metered(meter)(eventListQuery(db, tenantId, filter, LIST_COLUMNS, limit));
        return rows.map(
          (r): EventListItem => ({
            id: r.id,
            createdAt: Number(r.created_at),
            action: r.action,
            surface: r.surface,
            session: r.session,
            decision: r.decision as Decision,
            wouldBeDecision: r.would_be_decision as Decision,
            actorType: r.actor_type as ActorType,
            confidence: Number(r.confidence),
            degraded: Number(r.degraded) === 1,
            enforcementMode: r.enforcement_mode as EnforcementMode,
            riskEstimate: r.risk_estimate === null ? null : Number(r.risk_estimate),
          }),
        );
      }),

    eventPositions: (tenantId, filter, offset, count, meter) =>
      guard("insights.eventPositions", async () => {
        const rows = await metered(meter)(
          eventListQuery(db, tenantId, filter, ["created_at", "id"], count, offset),
        );
        return rows.map((r) => ({ createdAt: Number(r.created_at), id: r.id }));
      }),

    reasonCounts: (tenantId, scope, meter) =>
      guard("insights.reasonCounts", async () =>
        (await metered(meter)(reasonCountsQuery(db, rt.jsonArrayElements, tenantId, scope))).map(
          reasonCountFromRow,
        ),
      ),

    knownActions: (tenantId, meter) =>
      guard("insights.knownActions", async () =>
        (await metered(meter)(knownActionsQuery(tenantId).compile(db))).map((r) => r.action),
      ),

    challengesForEvent: (tenantId, eventId) =>
      guard("insights.challengesForEvent", async () =>
        (
          await db
            .selectFrom("challenges")
            .selectAll()
            .where("tenant_id", "=", tenantId)
            .where("event_id", "=", eventId)
            .orderBy("issued_at")
            .orderBy("id")
            .execute()
        ).map(challengeFromRow),
      ),

    riskGroups: (tenantId, scope, meter) =>
      guard("insights.riskGroups", async () => {
        let qb = db
          .selectFrom("events")
          .select((eb) => [...RISK_COLUMNS, eb.fn.countAll<number>().as("count")])
          .where("tenant_id", "=", tenantId)
          .where(standsForItsAttempt);
        if (scope.action !== undefined) qb = qb.where("action", "=", scope.action);
        // The period is read from the events_risk index itself: written `+created_at`, the range cannot
        // pick the time index (which would leave a million rows to sort into groups).
        const rows = await metered(meter)(
          qb
            .where(sql<number>`+created_at`, ">=", scope.since)
            .where(sql<number>`+created_at`, "<", scope.until)
            .groupBy([...RISK_COLUMNS])
            .compile(),
        );
        return rows.map(riskGroupFromRow);
      }),

    labelledRiskGroups: (tenantId, scope, abuseOutcomes, meter) =>
      guard("insights.labelledRiskGroups", async () => {
        const labels = effectiveLabels(db, tenantId, abuseOutcomes);
        // From the labelled attempts (observations are the fewer) to their scored events by primary key.
        let qb = db
          .selectFrom(labels.as("f"))
          .crossJoin("events as e")
          .whereRef("e.id", "=", "f.event_id")
          .where("e.tenant_id", "=", tenantId)
          .where("e.created_at", ">=", scope.since)
          .where("e.created_at", "<", scope.until);
        if (scope.action !== undefined) qb = qb.where("e.action", "=", scope.action);
        const columns = RISK_COLUMNS.map((c) => `e.${c}` as const);
        const rows = await metered(meter)(
          qb
            .select((eb) => [...columns, "f.abusive", eb.fn.countAll<number>().as("count")])
            .groupBy([...columns, "f.abusive"])
            .compile(),
        );
        return rows.map(
          (r): LabelledRiskGroup => ({ ...riskGroupFromRow(r), abusive: Number(r.abusive) === 1 }),
        );
      }),

    outcomeCounts: (tenantId, scope, meter) =>
      guard("insights.outcomeCounts", async () => {
        let qb = db
          .selectFrom("feedback as f")
          .leftJoin(movedToAttempt(tenantId).as("m"), (j) => j.onRef("m.source", "=", "f.event_id"))
          .crossJoin("events as e")
          .where("e.id", "=", sql<string>`coalesce(m.target, f.event_id)`)
          .where("f.tenant_id", "=", tenantId)
          .where("f.status", "=", "effective")
          .where("e.tenant_id", "=", tenantId)
          .where("e.created_at", ">=", scope.since)
          .where("e.created_at", "<", scope.until);
        if (scope.action !== undefined) qb = qb.where("e.action", "=", scope.action);
        const rows = await metered(meter)(
          qb
            .select((eb) => [
              "e.would_be_decision",
              "f.outcome",
              eb.fn.count<number>("e.id").distinct().as("events"),
              eb.fn.countAll<number>().as("observations"),
            ])
            .groupBy(["e.would_be_decision", "f.outcome"])
            .orderBy("e.would_be_decision")
            .orderBy("f.outcome")
            .compile(),
        );
        return rows.map(
          (r): OutcomeCount => ({
            decision: r.would_be_decision as Decision,
            outcome: r.outcome,
            events: Number(r.events),
            observations: Number(r.observations),
          }),
        );
      }),

    abusiveSetups: (tenantId, scope, abuseOutcomes, limit, meter) =>
      guard("insights.abusiveSetups", async () =>
        (await metered(meter)(abusiveSetupsQuery(rt, tenantId, scope, abuseOutcomes, limit))).map(
          abusiveSetupFromRow,
        ),
      ),

    markCounts: (tenantId, scope, marks, outcomes, meter) =>
      guard("insights.markCounts", async () => {
        const byKind = marksByKind(marks);
        if (byKind.size === 0) return [];
        const rows = await metered(meter)(markCountsQuery(rt, tenantId, scope, byKind, outcomes));
        return markCountsFromRows(rows, byKind);
      }),
  };
}

/** What lists show of an event (EventListItem). */
const LIST_COLUMNS = [
  "id",
  "created_at",
  "action",
  "surface",
  "session",
  "decision",
  "would_be_decision",
  "actor_type",
  "confidence",
  "degraded",
  "enforcement_mode",
  "risk_estimate",
] as const;

/** In the order of the events_risk index, so the groups are formed while it is scanned. */
const RISK_COLUMNS = [
  "action",
  "risk_estimate",
  "risk_low",
  "risk_high",
  "actor_type",
  "decided_by",
  "risk_raised",
  "would_be_decision",
] as const;

type RiskRow = Pick<Database["events"], (typeof RISK_COLUMNS)[number]> & { count: number | string };

function riskGroupFromRow(r: RiskRow): RiskGroup {
  return {
    action: r.action,
    risk:
      r.risk_estimate === null
        ? null
        : {
            estimate: Number(r.risk_estimate),
            low: Number(r.risk_low),
            high: Number(r.risk_high),
            raised: Number(r.risk_raised) === 1,
          },
    actorType: r.actor_type as ActorType,
    decidedBy: r.decided_by as Decider,
    decision: r.would_be_decision as Decision,
    count: Number(r.count),
  };
}
