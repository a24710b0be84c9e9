import { type CompiledQuery, type Kysely, type SqlBool, sql } from "kysely";
import type { Decision } from "../../domain.js";
import type { EventListFilter, EventScope, ReasonCount } from "../interfaces.js";
import type { Database } from "../schema.js";
import type { SqlRuntime } from "./runtime.js";

type EventColumn = keyof Database["events"];

/**
 * One read of an events list (listEvents' filter), newest first: `limit` events from `offset` on,
 * the given columns of each. Each search reads its events from an index that leads with the tenant
 * (migrations.ts, 0012_event_search), never from the signals' JSON: an email hash, a network or a
 * session from its own index, degraded=true from the partial index of degraded events, the rest from
 * the tenant's time index. A reason code is checked on each event read (reasonCodeCondition).
 * After a cursor, the period ends at the cursor's time too: with that single upper bound the database
 * starts its index range there; with only `created_at < until` and the cursor as an OR it read every
 * newer index entry again, each page slower than the one before (50 ms a page at 900,000 events from
 * the newest, 4 ms now).
 */
export function eventListQuery<C extends EventColumn>(
  db: Kysely<Database>,
  tenantId: string,
  filter: EventListFilter,
  columns: readonly C[],
  limit: number,
  offset = 0,
): CompiledQuery<Pick<Database["events"], C>> {
  const before = filter.before;
  const until = before ? Math.min(filter.until, before.createdAt + 1) : filter.until;
  let qb = db
    .selectFrom("events as e")
    .where("e.tenant_id", "=", tenantId)
    .where("e.created_at", ">=", filter.since)
    .where("e.created_at", "<", until);
  for (const condition of eventConditions(filter)) qb = qb.where(condition);
  if (before) qb = qb.where(keyset(sql.ref("e.created_at"), sql.ref("e.id"), before));
  return qb
    .select(columns.map((c) => `e.${c}` as const))
    .orderBy("e.created_at", "desc")
    .orderBy("e.id", "desc")
    .limit(limit)
    .offset(offset)
    .compile() as CompiledQuery<Pick<Database["events"], C>>;
}

/** The filter's conditions on the event itself (alias e). */
function eventConditions(filter: EventListFilter) {
  const conditions = [];
  const equal = (column: string, value: string | undefined) => {
    if (value !== undefined) conditions.push(sql<SqlBool>`${sql.ref(`e.${column}`)} = ${value}`);
  };
  equal("action", filter.action);
  equal("session", filter.session);
  equal("decision", filter.decision);
  equal("actor_type", filter.actorType);
  equal("email_hash", filter.emailHash);
  equal("network", filter.network);
  // Written as literals, so the database sees that degraded = 1 is the partial index's own condition.
  if (filter.degraded !== undefined) {
    conditions.push(sql<SqlBool>`e.degraded = ${sql.lit(filter.degraded ? 1 : 0)}`);
  }
  if (filter.reasonCode !== undefined) conditions.push(reasonCodeCondition(filter.reasonCode));
  return conditions;
}

/**
 * The event gave this reason code: its reason_codes (a JSON array written by JSON.stringify, no
 * spaces: rows.ts) holds the JSON string `"code"`, quotes included, so one code never matches inside
 * another (`degraded` never finds `challenge_cleared_after_degraded`). LIKE's own `_` and `%` are
 * escaped: a code matches only itself. Checked on each event the rest of the filter reads; verify
 * writes nothing for it.
 */
function reasonCodeCondition(code: string) {
  const pattern = `%${JSON.stringify(code).replace(/[\\%_]/g, "\\$&")}%`;
  return sql<SqlBool>`e.reason_codes like ${pattern} escape '\\'`;
}

/** Strictly after the cursor in the newest-first order (time, then id, descending). */
function keyset(
  at: ReturnType<typeof sql.ref>,
  id: ReturnType<typeof sql.ref>,
  before: { createdAt: number; id: string },
) {
  return sql<SqlBool>`(${at} < ${before.createdAt} or (${at} = ${before.createdAt} and ${id} < ${before.id}))`;
}

/**
 * Events in scope per reason code and decision, largest first, from reason_codes at read time: the
 * period's events (the tenant's time index) grouped by their codes' JSON text and decision, then each
 * group's array unpacked once (`elements`: SqlRuntime.jsonArrayElements) and summed. The groups are
 * few (the combinations of codes verdicts give): 0.30 s for 300,000 events on SQLite, where unpacking
 * every event's array took 0.44 s (docs/benchmarks.md). An event's codes are distinct (written so:
 * rows.ts), so it counts once per code. The route keeps the answer a few seconds.
 */
export function reasonCountsQuery(
  db: Kysely<Database>,
  elements: SqlRuntime["jsonArrayElements"],
  tenantId: string,
  scope: EventScope,
) {
  const action = scope.action === undefined ? sql`` : sql`and e.action = ${scope.action}`;
  return sql<{ code: string; decision: string; count: number | string }>`
    with g as (
      select e.reason_codes as codes, e.decision as decision, count(*) as n
      from events e
      where e.tenant_id = ${tenantId} and e.created_at >= ${scope.since} and e.created_at < ${scope.until}
        and e.reason_codes is not null ${action}
      group by e.reason_codes, e.decision
    )
    select c.value as code, g.decision as decision, sum(g.n) as count
    from g cross join ${elements(sql.ref("g.codes"), "c")}
    group by c.value, g.decision
    order by count desc, code, decision`.compile(db);
}

export const reasonCountFromRow = (r: {
  code: string;
  decision: string;
  count: number | string;
}): ReasonCount => ({
  code: r.code,
  decision: r.decision as Decision,
  count: Number(r.count),
});

/** At most this many of a tenant's actions are listed. */
export const KNOWN_ACTIONS_MAX = 1000;

/**
 * The tenant's distinct actions, in order, found one index seek each (a loose index scan of
 * events_risk, which leads with tenant and action) rather than by reading every event.
 */
export function knownActionsQuery(tenantId: string) {
  return sql<{ action: string }>`with recursive a(action) as (
      select min(action) from events where tenant_id = ${tenantId}
      union all
      select (select min(e.action) from events e where e.tenant_id = ${tenantId} and e.action > a.action)
      from a where a.action is not null
    )
    select action from a where action is not null limit ${sql.lit(KNOWN_ACTIONS_MAX)}`;
}
