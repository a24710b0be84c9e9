import { type Kysely, sql } from "kysely";
import type { EventPartition, PartitionMaintenance } from "../sql/runtime.js";

/**
 * PostgreSQL keeps events in weekly partitions of `created_at` (epoch ms), so that retention can drop
 * a week of events at once instead of deleting them row by row (docs/deployment.md, "Partitions").
 *
 * - `events_before`: from the lowest time up to the first weekly partition. It holds what the table
 *   held when it was partitioned (migration 0015), and anything written with an older time.
 * - `events_w<yyyymmdd>`: one week from 00:00 UTC of the date, weeks counted from the epoch (so they
 *   start on Thursdays). PARTITIONS_AHEAD of them past the current week exist at all times: the
 *   migration creates them, and so does every `warden migrate` and every housekeeping pass that may.
 *
 * There is no default partition: it would forbid DETACH … CONCURRENTLY, the one way to take a week
 * out without locking verify's inserts. An event whose time has no partition (a clock months off) is
 * refused by the database, and verify answers it with the degraded challenge.
 */
export const WEEK_MS = 7 * 86_400_000;
/** Weekly partitions kept ready past the current week. */
export const PARTITIONS_AHEAD = 6;
export const BEFORE_PARTITION = "events_before";
const WEEKLY_PREFIX = "events_w";
/**
 * The advisory locks of partition maintenance, each per schema (several Warden deployments may share
 * a database): one process creates partitions at a time, and one drops them.
 */
const CREATE_LOCK = "event-partitions:create";
const DROP_LOCK = "event-partitions:drop";
const lockKey = (name: string) => sql`hashtextextended(${name} || current_schema(), 0)`;
/**
 * What a drop writes on a partition before it detaches it: a table left detached is finished by a
 * later pass only with it, never an operator's own table that happens to share the name pattern.
 */
export const DROPPING_COMMENT = "warden: dropping this week of events";

/** The start of the week `at` falls in (epoch ms). */
export const weekStart = (at: number): number => Math.floor(at / WEEK_MS) * WEEK_MS;

/** The weekly partition that starts at `start`. */
export const weeklyPartitionName = (start: number): string =>
  `${WEEKLY_PREFIX}${new Date(start).toISOString().slice(0, 10).replaceAll("-", "")}`;

/**
 * Migration 0015 on PostgreSQL, inside the migration's transaction: the events table becomes the
 * partition `events_before` of a new partitioned `events`, with the same columns and indexes, and the
 * weekly partitions from the week after its newest event (or after `now`) on are created.
 *
 * Every unique index of a partitioned table includes the partition key, so the primary key is (id,
 * created_at). Event ids stay unique: a time-ordered id carries its created_at (lib/crypto.ts,
 * timeOrderedId), and a degraded event's keyed id is written only once (hotStatements.ts,
 * firstOfItsId). The old table's indexes are attached to the new table's, not built again; the one
 * index built over the existing events is the (id, created_at) key.
 */
export async function partitionEventsTable(db: Kysely<unknown>, now: number): Promise<void> {
  const { rows: kind } = await sql<{ kind: string }>`
    select relkind as kind from pg_class where relname = 'events' and relnamespace = current_schema()::regnamespace`.execute(
    db,
  );
  // Partitioned already (a migration record removed by hand and run again): nothing to do.
  if (kind[0]?.kind === "p") return;
  const { rows: indexes } = await sql<{ name: string; definition: string; primary: boolean }>`
    select i.relname as name, pg_get_indexdef(i.oid) as definition, x.indisprimary as primary
    from pg_index x
    join pg_class i on i.oid = x.indexrelid
    join pg_class t on t.oid = x.indrelid
    where t.relname = 'events' and t.relnamespace = current_schema()::regnamespace`.execute(db);
  const { rows: newest } = await sql<{
    at: string | number | null;
  }>`select max(created_at) as at from events`.execute(db);
  const boundary = weekStart(Math.max(now, Number(newest[0]?.at ?? 0) + 1)) + WEEK_MS;

  await sql`alter table events rename to ${sql.id(BEFORE_PARTITION)}`.execute(db);
  for (const index of indexes) {
    // The old key (id) goes: a partition's key is its parent's, (id, created_at), made below.
    if (index.primary)
      await sql`alter table ${sql.id(BEFORE_PARTITION)} drop constraint ${sql.id(index.name)}`.execute(db);
    else await sql`alter index ${sql.id(index.name)} rename to ${sql.id(`${index.name}_before`)}`.execute(db);
  }
  await sql`create table events (like ${sql.id(BEFORE_PARTITION)} including defaults including constraints including storage)
    partition by range (created_at)`.execute(db);
  await sql`alter table events add constraint events_pkey primary key (id, created_at)`.execute(db);
  // The old table's grants on the new one: a runtime role that wrote events still may.
  const { rows: grants } = await sql<{ grantee: string; privilege: string }>`
    select case when a.grantee = 0 then 'public' else a.grantee::regrole::text end as grantee,
      a.privilege_type as privilege
    from pg_class c, aclexplode(c.relacl) a
    where c.oid = ${BEFORE_PARTITION}::regclass and a.grantee <> c.relowner`.execute(db);
  for (const { grantee, privilege } of grants)
    await sql`grant ${sql.raw(privilege)} on events to ${sql.raw(grantee)}`.execute(db);
  // As a key of its own, which ATTACH adopts as its part of the parent's (a plain unique index it
  // would not: it would build the key again).
  await sql`alter table ${sql.id(BEFORE_PARTITION)} add constraint ${sql.id(`${BEFORE_PARTITION}_pkey`)} primary key (id, created_at)`.execute(
    db,
  );
  await sql`alter table events attach partition ${sql.id(BEFORE_PARTITION)}
    for values from (minvalue) to (${sql.lit(boundary)})`.execute(db);
  // The same definitions on the partitioned table: PostgreSQL attaches the old table's matching
  // indexes instead of building them again.
  for (const index of indexes) {
    if (index.primary) continue;
    await sql.raw(onPartitionedTable(index.definition)).execute(db);
  }
  await createWeeklyPartitions(db, boundary, weekStart(now) + (PARTITIONS_AHEAD + 1) * WEEK_MS);
}

/** An index definition of the old table (pg_get_indexdef), for the new partitioned `events`. */
function onPartitionedTable(definition: string): string {
  const rewritten = definition.replace(/ ON (?:ONLY )?(?:[^\s.]+\.)?events USING /, " ON events USING ");
  if (rewritten === definition) throw new Error(`unexpected index definition: ${definition}`);
  return rewritten;
}

/**
 * Creates the missing weekly partitions from `from` up to `until` (exclusive). Each is made as a table
 * of its own, then attached: ATTACH takes only a SHARE UPDATE EXCLUSIVE lock on `events`, which
 * verify's inserts and reads never wait for (CREATE TABLE … PARTITION OF would take an ACCESS
 * EXCLUSIVE one). Resolves the partitions it created.
 */
export async function createWeeklyPartitions(
  db: Kysely<unknown>,
  from: number,
  until: number,
): Promise<string[]> {
  const existing = new Set((await listEventPartitions(db)).map((p) => p.name));
  const created: string[] = [];
  for (let start = weekStart(from); start < until; start += WEEK_MS) {
    if (start < from) continue;
    const name = weeklyPartitionName(start);
    if (existing.has(name)) continue;
    await sql`create table ${sql.id(name)} (like events including defaults including constraints including storage including indexes)`.execute(
      db,
    );
    // A constraint that implies the bound spares ATTACH its scan (the table is empty anyway).
    await sql`alter table ${sql.id(name)} add constraint ${sql.id(`${name}_range`)}
      check (created_at >= ${sql.lit(start)} and created_at < ${sql.lit(start + WEEK_MS)})`.execute(db);
    await sql`alter table events attach partition ${sql.id(name)}
      for values from (${sql.lit(start)}) to (${sql.lit(start + WEEK_MS)})`.execute(db);
    await sql`alter table ${sql.id(name)} drop constraint ${sql.id(`${name}_range`)}`.execute(db);
    created.push(name);
  }
  return created;
}

/**
 * Makes sure the weekly partitions up to PARTITIONS_AHEAD weeks past the current one exist, creating
 * what is missing. That is the table owner's right: a role without it creates none, and throws once
 * the next three weeks lack a partition (`warden migrate` must then run at least every few weeks).
 * Of several processes, one creates at a time (a transaction's advisory lock); the others pass, or
 * wait up to `waitMs` when given. Resolves the partitions created.
 */
export async function ensurePartitionsAhead(
  db: Kysely<unknown>,
  now: number,
  /** Where to look first (a pool that is open anyway): `db` is then used only to make them. */
  lookup: Kysely<unknown> = db,
  /**
   * Wait up to this long for another process making them (`warden migrate` must not exit having
   * made none); without it, pass when one is.
   */
  waitMs?: number,
): Promise<string[]> {
  const first = weekStart(now);
  const until = first + (PARTITIONS_AHEAD + 1) * WEEK_MS;
  /** Whether any week from `first` up to `end` has no attached partition to take its events. */
  const missing = (partitions: readonly EventPartition[], end = until) => {
    for (let start = first; start < end; start += WEEK_MS) if (!takes(partitions, start)) return true;
    return false;
  };
  const partitions = await listEventPartitions(lookup);
  if (!missing(partitions)) return [];
  if (!(await ownsEvents(db))) {
    // A runtime role (`warden serve --no-migrate`) makes them through the owner's function when it
    // was granted it (`warden migrate --runtime-role`).
    if (await mayMakePartitions(db)) {
      const { rows } = await sql<{
        name: string;
      }>`select name from ${sql.id(PARTITIONS_FUNCTION)}(${sql.lit(now)}::bigint) as made(name)`.execute(db);
      return rows.map((r) => r.name);
    }
    // Without it `warden migrate` makes them. Quiet while the next weeks have theirs; then it says
    // so at every pass, weeks before the first event is refused.
    if (!missing(partitions, first + 3 * WEEK_MS)) return [];
    throw new Error(
      `the events partitions of the coming weeks are missing and ${await currentUser(db)} may not create them: run \`warden migrate --runtime-role <this role>\` with the schema owner's role (docs/deployment.md, "Partitions")`,
    );
  }
  // In a transaction, with its advisory lock: ATTACH may run in one, and so this works behind a
  // transaction pooler too.
  return db.transaction().execute(async (trx) => {
    if (waitMs === undefined) {
      const { rows } = await sql<{
        held: boolean;
      }>`select pg_try_advisory_xact_lock(${lockKey(CREATE_LOCK)}) as held`.execute(trx);
      if (rows[0]?.held !== true) return [];
    } else {
      await sql`set local lock_timeout = ${sql.lit(waitMs)}`.execute(trx);
      await sql`select pg_advisory_xact_lock(${lockKey(CREATE_LOCK)})`.execute(trx);
    }
    const partitions = await listEventPartitions(trx);
    if (!missing(partitions)) return [];
    const before = partitions.find((p) => p.name === BEFORE_PARTITION);
    return createWeeklyPartitions(trx, Math.max(first, before?.to ?? first), until);
  });
}

/**
 * The owner's function that makes the coming weeks' partitions for a role that may not (migration
 * 0017): SECURITY DEFINER, so it runs as its owner, who owns `events`; EXECUTE only for the roles
 * `warden migrate --runtime-role` names. It makes exactly what ensurePartitionsAhead would (the
 * weeks from `now_ms`'s to PARTITIONS_AHEAD past it, named by weeklyPartitionName, made as
 * createWeeklyPartitions makes them), and refuses a time more than a year from the database's clock.
 */
export async function createPartitionsFunction(db: Kysely<unknown>): Promise<void> {
  const body = String.raw`
declare
  week constant bigint := ${WEEK_MS};
  first_week bigint;
  before_to bigint;
  start_ms bigint;
  part text;
begin
  if abs(now_ms - (extract(epoch from clock_timestamp()) * 1000)::bigint) > 366::bigint * 86400000 then
    raise exception 'warden: % is more than a year from the database clock', now_ms;
  end if;
  perform pg_advisory_xact_lock(hashtextextended('${CREATE_LOCK}' || current_schema(), 0));
  first_week := floor(now_ms::numeric / week)::bigint * week;
  select (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''?(-?\d+)''?\)'))[1]::bigint into before_to
    from pg_class c join pg_inherits i on i.inhrelid = c.oid
    where c.relname = '${BEFORE_PARTITION}' and c.relnamespace = current_schema()::regnamespace;
  for k in 0..${PARTITIONS_AHEAD} loop
    start_ms := first_week + k * week;
    continue when before_to is not null and start_ms < before_to;
    part := '${WEEKLY_PREFIX}' || to_char(to_timestamp(start_ms / 1000.0) at time zone 'UTC', 'YYYYMMDD');
    continue when to_regclass(quote_ident(part)) is not null;
    execute format('create table %I (like events including defaults including constraints including storage including indexes)', part);
    execute format('alter table %I add constraint %I check (created_at >= %s and created_at < %s)', part, part || '_range', start_ms, start_ms + week);
    execute format('alter table events attach partition %I for values from (%s) to (%s)', part, start_ms, start_ms + week);
    execute format('alter table %I drop constraint %I', part, part || '_range');
    name := part;
    return next;
  end loop;
end`;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema ?? "public";
  await sql`create or replace function ${sql.id(PARTITIONS_FUNCTION)}(now_ms bigint) returns table (name text)
    language plpgsql security definer set search_path = ${sql.id(schema)}, pg_temp
    as ${sql.lit(body)}`.execute(db);
  // Functions are executable by every role unless revoked.
  await sql`revoke all on function ${sql.id(PARTITIONS_FUNCTION)}(bigint) from public`.execute(db);
}

/** The function of migration 0017 (createPartitionsFunction). */
export const PARTITIONS_FUNCTION = "warden_make_event_partitions";

/** Whether this connection's role may run the owner's function that makes partitions. */
async function mayMakePartitions(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ may: boolean | null }>`
    select has_function_privilege(to_regprocedure(${`${PARTITIONS_FUNCTION}(bigint)`}), 'execute') as may`.execute(
    db,
  );
  return rows[0]?.may === true;
}

/** Whether this connection's role owns `events` (or is a member of the role that does): DDL on it is the owner's. */
async function ownsEvents(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ owns: boolean }>`
    select pg_has_role(c.relowner, 'USAGE') as owns from pg_class c
    where c.relname = 'events' and c.relnamespace = current_schema()::regnamespace`.execute(db);
  return rows[0]?.owns === true;
}

async function currentUser(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ name: string }>`select current_user as name`.execute(db);
  return `role ${rows[0]?.name ?? "?"}`;
}

/** Whether an attached partition takes events from the time `at`. */
const takes = (partitions: readonly EventPartition[], at: number): boolean =>
  partitions.some(
    (p) =>
      p.state === "attached" &&
      (p.from ?? Number.NEGATIVE_INFINITY) <= at &&
      at < (p.to ?? Number.POSITIVE_INFINITY),
  );

/**
 * Runs `fn` on one connection while it holds a session-level advisory lock on `key`; resolves
 * undefined without running it when another session holds the lock. DDL such as DETACH …
 * CONCURRENTLY cannot run inside a transaction, so the lock is the session's, released before the
 * connection goes back.
 */
async function withSessionLock<T>(
  db: Kysely<unknown>,
  key: string,
  fn: (conn: Kysely<unknown>) => Promise<T>,
): Promise<T | undefined> {
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{
      held: boolean;
    }>`select pg_try_advisory_lock(${lockKey(key)}) as held`.execute(conn);
    if (rows[0]?.held !== true) return undefined;
    try {
      return await fn(conn);
    } finally {
      await sql`select pg_advisory_unlock(${lockKey(key)})`.execute(conn);
    }
  });
}

const BOUND = /FOR VALUES FROM \((MINVALUE|'?(-?\d+)'?)\) TO \((MAXVALUE|'?(-?\d+)'?)\)/;

/**
 * The partitions of events in this schema, oldest first, and the tables an interrupted drop left
 * detached (named as partitions, no longer attached).
 */
export async function listEventPartitions(db: Kysely<unknown>): Promise<EventPartition[]> {
  const { rows } = await sql<{
    name: string;
    bound: string | null;
    pending: boolean | null;
    comment: string | null;
  }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound, i.inhdetachpending as pending,
      obj_description(c.oid, 'pg_class') as comment
    from pg_class c
    left join pg_inherits i on i.inhrelid = c.oid
    where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
      and (c.relname = ${BEFORE_PARTITION} or c.relname ~ ${`^${WEEKLY_PREFIX}[0-9]{8}$`})`.execute(db);
  const partitions = rows.flatMap((r): EventPartition[] => {
    const bound = r.bound === null ? null : BOUND.exec(r.bound);
    const number = (s: string | undefined) => (s === undefined ? undefined : Number(s));
    const state = r.pending === null ? "detached" : r.pending ? "detaching" : "attached";
    // A table out of events that a drop of ours did not mark is someone else's: left alone.
    if (state === "detached" && r.comment !== DROPPING_COMMENT) return [];
    return [{ name: r.name, from: number(bound?.[2]), to: number(bound?.[4]), state }];
  });
  const order = (p: EventPartition) => (p.name === BEFORE_PARTITION ? "" : p.name);
  return partitions.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

/**
 * Partition maintenance alone across processes (the advisory lock above), on `db`'s connections,
 * which must have no statement timeout of their own: DETACH … CONCURRENTLY waits for every
 * transaction that could still see the partition. Each DDL statement is bounded by DDL_TIMEOUT_MS;
 * one cut short leaves the partition "detaching", finalized by the next pass. Resolves undefined
 * when another process is maintaining.
 */
export function maintainPartitions<T>(
  db: Kysely<unknown>,
  fn: (m: PartitionMaintenance) => Promise<T>,
): Promise<T | undefined> {
  return withSessionLock(db, DROP_LOCK, async (conn) => {
    // A runtime role may not detach or drop: its passes remove events row by row instead.
    if (!(await ownsEvents(conn))) return undefined;
    await sql`set statement_timeout = ${sql.lit(DDL_TIMEOUT_MS)}`.execute(conn);
    try {
      return await fn({
        list: () => listEventPartitions(conn),
        // One index probe a tenant (events_tenant_time leads with tenant_id): a loose index scan.
        tenantsIn: async (name) => {
          const { rows } = await sql<{ id: string }>`
            with recursive t(id) as (
              select min(tenant_id) from ${sql.id(name)}
              union all
              select (select min(tenant_id) from ${sql.id(name)} where tenant_id > t.id) from t where t.id is not null
            )
            select id from t where id is not null`.execute(conn);
          return rows.map((r) => r.id);
        },
        detach: async (partition) => {
          await sql`comment on table ${sql.id(partition.name)} is ${sql.lit(DROPPING_COMMENT)}`.execute(conn);
          if (partition.state === "attached")
            await sql`alter table events detach partition ${sql.id(partition.name)} concurrently`.execute(
              conn,
            );
          else if (partition.state === "detaching")
            await sql`alter table events detach partition ${sql.id(partition.name)} finalize`.execute(conn);
        },
        readKeys: async (name, after, size) => {
          const { rows } = await sql<{ last: string | null; read: string | number }>`
            select max(id) as last, count(*) as read
            from (select id from ${sql.id(name)} where id > ${after} order by id limit ${size}) keys`.execute(
            conn,
          );
          return { last: rows[0]?.last ?? undefined, read: Number(rows[0]?.read ?? 0) };
        },
        pages: async (table) => {
          const { rows } = await sql<{
            pages: string | number;
          }>`select pg_relation_size(${table}::regclass) / current_setting('block_size')::int as pages`.execute(
            conn,
          );
          return Number(rows[0]?.pages ?? 0);
        },
        // A TID range scan (PostgreSQL 14 and later) reads the pages in order; the detached table is
        // read through its key's index only (ids are unique across tenants): a sub-select with LIMIT
        // is never turned into a join, so the planner cannot hash the whole week instead (it did: an
        // 18 GB week read from disk held every verify's commit for 20 s).
        deleteHangingOff: async (trx, partition, table, column, [from, to]) => {
          const { rows } = await sql<{
            tenant_id: string;
            event_id: string | null;
            reverify_event_id?: string | null;
          }>`
            delete from ${sql.table(table)} t
            where t.ctid >= ${sql.lit(`(${from},0)`)}::tid and t.ctid < ${sql.lit(`(${to},0)`)}::tid
              and (select true from ${sql.id(partition)} d where d.id = t.${sql.ref(column)} limit 1)
            returning t.tenant_id, t.event_id${table === "event_clears" ? sql`, t.reverify_event_id` : sql``}`.execute(
            trx,
          );
          return rows;
        },
        drop: async (name) => {
          await sql`drop table ${sql.id(name)}`.execute(conn);
        },
      });
    } finally {
      await sql`reset statement_timeout`.execute(conn);
    }
  });
}

/** The bound of one DDL statement of partition maintenance. */
const DDL_TIMEOUT_MS = 60_000;
