import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

/**
 * Whether an event stands for its attempt in the risk views (calibration, what-if): every event but
 * a re-verify whose honoured clear stood in for scoring (the attempt's first verdict holds its risk),
 * and but a degraded first verdict whose clear a scored re-verify redeemed (that re-verify holds it).
 * An attempt is thus counted once, with the risk of its first scored verdict (docs/api.md, "Attempts").
 */
export const standsForItsAttempt = sql<boolean>`not (decided_by = 'clear' and risk_estimate is null)
  and (decided_by <> 'degraded' or not exists (select 1 from event_clears c
    where c.tenant_id = events.tenant_id and c.event_id = events.id and c.reverify_event_id is not null))`;

/**
 * The observations whose event does not stand for its attempt (standsForItsAttempt), moved to the
 * one that does: from a re-verify whose clear stood in for scoring to its attempt's first verdict,
 * and from a degraded first verdict to the scored re-verify that redeemed its clear. Read from the
 * tenant's clears (few), so feedback on any event of an attempt counts for the attempt without a
 * lookup per observation.
 */
export function movedToAttempt(tenantId: string) {
  return sql<{ source: string; target: string }>`(
    select ec.reverify_event_id as source, ec.event_id as target
      from event_clears ec join events r on r.id = ec.reverify_event_id
      where ec.tenant_id = ${tenantId} and r.risk_estimate is null
    union all
    select c.event_id as source, c.reverify_event_id as target
      from event_clears c join events d on d.id = c.event_id
      where c.tenant_id = ${tenantId} and d.decided_by = 'degraded' and c.reverify_event_id is not null)`;
}

/** Whether one of the attempt's observations has one of `outcomes`, as 1 or 0. */
const anyOf = (outcomes: readonly string[]) =>
  outcomes.length === 0
    ? sql<number>`0`
    : sql<number>`case when fb.outcome in (${sql.join(outcomes)}) then 1 else 0 end`;

/**
 * Each attempt with effective observations, once, flagged abusive when one of them is an abuse
 * outcome, and good when one of them is one of `goodOutcomes` (the campaigns' collateral).
 */
export function effectiveLabels(
  db: Kysely<Database>,
  tenantId: string,
  abuseOutcomes: readonly string[],
  goodOutcomes: readonly string[] = [],
) {
  const attempt = sql<string>`coalesce(m.target, fb.event_id)`;
  return db
    .selectFrom("feedback as fb")
    .leftJoin(movedToAttempt(tenantId).as("m"), (j) => j.onRef("m.source", "=", "fb.event_id"))
    .select((eb) => [
      attempt.as("event_id"),
      eb.fn.max<number>(anyOf(abuseOutcomes)).as("abusive"),
      eb.fn.max<number>(anyOf(goodOutcomes)).as("good"),
    ])
    .where("fb.tenant_id", "=", tenantId)
    .where("fb.status", "=", "effective")
    .groupBy(attempt);
}
