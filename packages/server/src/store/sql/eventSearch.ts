import { type CompiledQuery, type Kysely, type SqlBool, sql } from "kysely";
import type { Decision, EventListFilter, EventScope, ReasonCount } from "../interfaces.js";
import type { Database } from "../schema.js";

type EventColumn = keyof Database["events"];

/**
 * One read of an events list (listEvents' filter), newest first: `limit` events from `offset` on,
 * the given columns of each. Each search reads its events from an index that leads with the tenant
 * (migrations.ts, 0012_event_search), never from the signals' JSON:
 * - a reason code alone (or with filters that keep most events) walks that code's rows of
 *   event_reasons newest first and takes their events by primary key;
 * - an email hash, a network or a session reads that value's events from its own index, a reason code
 *   then checked per event by the reason row's primary key;
 * - degraded=true reads the partial index of degraded events; the rest the tenant's time index.
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
  const code = filter.reasonCode;
  const narrowerIndex =
    filter.emailHash !== undefined || filter.network !== undefined || filter.session !== undefined;
  const selected = columns.map((c) => `e.${c}` as const);
  if (code !== undefined && !narrowerIndex) {
    let qb = db
      .selectFrom("event_reasons as r")
      // CROSS JOIN: SQLite keeps this order (the reason rows drive); PostgreSQL plans it freely.
      .crossJoin("events as e")
      .whereRef("e.id", "=", "r.event_id")
      .where("r.tenant_id", "=", tenantId)
      .where("r.code", "=", code)
      .where("r.created_at", ">=", filter.since)
      .where("r.created_at", "<", until)
      .where("e.tenant_id", "=", tenantId);
    for (const condition of eventConditions(filter)) qb = qb.where(condition);
    if (before) qb = qb.where(keyset(sql.ref("r.created_at"), sql.ref("r.event_id"), before));
    return qb
      .select(selected)
      .orderBy("r.created_at", "desc")
      .orderBy("r.event_id", "desc")
      .limit(limit)
      .offset(offset)
      .compile() as CompiledQuery<Pick<Database["events"], C>>;
  }
  let qb = db
    .selectFrom("events as e")
    .where("e.tenant_id", "=", tenantId)
    .where("e.created_at", ">=", filter.since)
    .where("e.created_at", "<", until);
  for (const condition of eventConditions(filter)) qb = qb.where(condition);
  if (code !== undefined) {
    qb = qb.where(
      sql<SqlBool>`exists (select 1 from event_reasons r where r.tenant_id = e.tenant_id and r.code = ${code}
        and r.created_at = e.created_at and r.event_id = e.id)`,
    );
  }
  if (before) qb = qb.where(keyset(sql.ref("e.created_at"), sql.ref("e.id"), before));
  return qb
    .select(selected)
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
  return conditions;
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
 * Events in scope per reason code and decision, largest first, read from event_reasons_time alone
 * (tenant, period, action, code, decision): only the groups cross over.
 */
export function reasonCountsQuery(db: Kysely<Database>, tenantId: string, scope: EventScope) {
  let qb = db
    .selectFrom("event_reasons")
    .select((eb) => ["code", "decision", eb.fn.countAll<number>().as("count")])
    .where("tenant_id", "=", tenantId)
    .where("created_at", ">=", scope.since)
    .where("created_at", "<", scope.until);
  if (scope.action !== undefined) qb = qb.where("action", "=", scope.action);
  return qb
    .groupBy(["code", "decision"])
    .orderBy("count", "desc")
    .orderBy("code")
    .orderBy("decision")
    .compile();
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
