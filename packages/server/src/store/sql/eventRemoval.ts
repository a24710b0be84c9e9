import type { Expression, ExpressionBuilder, Kysely, SqlBool } from "kysely";
import {
  ERASURE_MEMORY_MS,
  type ErasureSubject,
  type EventRemovalStore,
  erasedDigest,
  erasureKind,
  noneRemoved,
  type RemovedRows,
  type RetentionCutoff,
} from "../interfaces.js";
import type { Database } from "../schema.js";
import { purgeInChunks, restAfter, type StopSignal } from "./purge.js";
import { guard } from "./rows.js";
import type { EventPartition, HangingTable, PartitionMaintenance, SqlRuntime } from "./runtime.js";

type EventFilter = (eb: ExpressionBuilder<Database, "events">) => Expression<SqlBool>;

/** Retention and erasure on SQL (EventRemovalStore). */
export function createEventRemovalStore(rt: SqlRuntime): EventRemovalStore {
  const { db } = rt;
  const removeWhere = async (
    tenantId: string,
    filter: EventFilter,
    removed: RemovedRows,
    signal: StopSignal | undefined,
    { alone, erasing = false }: { alone?: string; erasing?: boolean } = {},
  ) =>
    purgeInChunks(
      rt,
      async (trx, limit) => {
        // Another process removing the same events would only wait for its row locks, then find
        // them gone: it leaves the work to that one until its next pass.
        if (alone !== undefined && !(await rt.tryExclusive(trx, alone))) return 0;
        return removeChunk(trx, tenantId, filter, limit, removed, erasing);
      },
      { ...rt.removalPace, transaction: true, signal },
    );
  return {
    olderThan: (before: RetentionCutoff, signal, windowEnd) =>
      guard("removal.olderThan", async () => {
        const removed = noneRemoved();
        const tenants = await db.selectFrom("tenants").select("id").orderBy("id").execute();
        const cutoffs = new Map<string, number | undefined>();
        for (const { id } of tenants) cutoffs.set(id, typeof before === "number" ? before : await before(id));
        // Whole weeks first, where the store keeps them apart; then what is left, row by row.
        // A week that cannot be dropped (a DETACH cut short by an old snapshot, say) leaves its
        // events to the row-by-row removal below; the failure is thrown once that is done.
        let dropFailed: unknown;
        const { partitions } = rt;
        try {
          if (partitions && (await partitions.list()).some((p) => candidate(p, cutoffs)))
            await partitions.maintain((m) =>
              dropExpiredPartitions(rt, m, cutoffs, removed, signal, windowEnd),
            );
        } catch (err) {
          dropFailed = err;
        }
        // Tenant by tenant: each chunk is then a range of the (tenant_id, created_at) index.
        const rowsStop: StopSignal = {
          get aborted() {
            return signal?.aborted === true || windowEnd?.aborted === true;
          },
        };
        for (const [id, cutoff] of cutoffs) {
          if (rowsStop?.aborted) break;
          if (cutoff === undefined) continue;
          await removeWhere(id, (eb) => eb("created_at", "<", cutoff), removed, rowsStop, {
            alone: `retention\n${id}`,
          });
        }
        // Erasures are remembered against late degraded events until the tenant's retention (which
        // removes any event of before them) or ERASURE_MEMORY_MS passes them.
        const forgetBefore = Date.now() - ERASURE_MEMORY_MS;
        for (const [id, cutoff] of cutoffs) {
          if (signal?.aborted) break;
          await rt.write((conn) =>
            conn
              .deleteFrom("erasures")
              .where("tenant_id", "=", id)
              .where("erased_at", "<", Math.max(forgetBefore, cutoff ?? forgetBefore))
              .execute(),
          );
        }
        if (dropFailed !== undefined) {
          throw new Error(
            `dropping a week of events failed (${(dropFailed as Error).message}); ${removed.events} event(s) removed row by row meanwhile`,
            { cause: dropFailed },
          );
        }
        return removed;
      }),
    partitionsAhead: (now) =>
      guard("removal.partitionsAhead", async () => rt.partitions?.ensureAhead(now) ?? []),
    erase: (tenantId, subject, signal) =>
      guard("removal.erase", () =>
        rt.overwritingDeleted(async () => {
          const removed = noneRemoved();
          // First remembered, so that a degraded event of the subject is either written before this
          // (and removed below) or refused by events.record after it (verifyWriteStores.ts).
          const { kind, value } = erasureKind(subject);
          await rt.writeTransaction(async (trx) => {
            await rt.serialize(trx, `erasure\n${tenantId}`);
            await trx
              .insertInto("erasures")
              .values({ tenant_id: tenantId, kind, value: erasedDigest(kind, value), erased_at: Date.now() })
              .execute();
          });
          await removeWhere(tenantId, subjectFilter(subject), removed, signal, { erasing: true });
          return removed;
        }),
      ),
  };
}

/** The subject's events, each read from its own index (events_email, events_network, events_session). */
function subjectFilter(subject: ErasureSubject): EventFilter {
  if ("emailHash" in subject) return (eb) => eb("email_hash", "=", subject.emailHash);
  if ("network" in subject) return (eb) => eb("network", "=", subject.network);
  if ("session" in subject) return (eb) => eb("session", "=", subject.session);
  return (eb) => eb("id", "=", subject.eventId);
}

/** A removed event, with what names its attempt. */
interface GoneEvent {
  id: string;
  session: string | null;
  attempt: string | null;
}

/**
 * One chunk, inside one write transaction: up to `limit` of the tenant's events that match, the other
 * event of each one's attempt (and, `erasing`, its degraded events), and everything on them. Resolves
 * how many matching events it removed.
 *
 * The events go first. On PostgreSQL that is what makes it safe against writers on the same events:
 * feedback, resolutions and challenges hold their event (SqlRuntime.holdRows) while they write, so
 * either the delete waits for them and the deletes after it (each statement reads what has committed
 * by then) take what they wrote, or they wait for this transaction and then find no event. A
 * redemption holds its challenge row, which the challenge delete waits for before the clears are read.
 */
async function removeChunk(
  trx: Kysely<Database>,
  tenantId: string,
  filter: EventFilter,
  limit: number,
  removed: RemovedRows,
  erasing: boolean,
): Promise<number> {
  // By id alone: ids are unique across tenants, and the subquery reads only the tenant's. With the
  // tenant here too, SQLite read all the tenant's events (through events_session) for every chunk.
  const matching = await trx
    .deleteFrom("events")
    .where("id", "in", (eb) =>
      eb.selectFrom("events").select("id").where("tenant_id", "=", tenantId).where(filter).limit(limit),
    )
    .returning(["id", "session", "attempt"])
    .execute();
  removed.events += matching.length;
  await removeAround(trx, tenantId, matching, removed, erasing);
  return matching.length;
}

/**
 * Inside a write transaction, after the tenant's events `gone` left the table: the other event of
 * each one's attempt, and everything on all of them. `erasing`, also the degraded events of their
 * attempts (degradedOfAttempts), with what hangs off those.
 */
async function removeAround(
  trx: Kysely<Database>,
  tenantId: string,
  gone: readonly GoneEvent[],
  removed: RemovedRows,
  erasing: boolean,
): Promise<void> {
  const all = new Set(gone.map((e) => e.id));
  let next: readonly GoneEvent[] = gone;
  // An attempt is its first event and the re-verify that redeemed its clear: one goes, both go.
  while (next.length > 0) {
    const ids = next.map((e) => e.id);
    removed.challenges += count(
      await trx
        .deleteFrom("challenges")
        .where("tenant_id", "=", tenantId)
        .where("event_id", "in", ids)
        .executeTakeFirst(),
    );
    // Two statements, each on its own index: as one OR, SQLite read every clear of the tenant.
    const clears = [];
    for (const column of ["event_id", "reverify_event_id"] as const) {
      clears.push(
        ...(await trx
          .deleteFrom("event_clears")
          .where("tenant_id", "=", tenantId)
          .where(column, "in", ids)
          .returning(["event_id", "reverify_event_id"])
          .execute()),
      );
    }
    removed.clears += clears.length;
    const partners = new Set(
      clears.flatMap((c) => [c.event_id, c.reverify_event_id]).filter((id): id is string => id !== null),
    );
    if (erasing) for (const id of await degradedOfAttempts(trx, tenantId, next)) partners.add(id);
    for (const id of all) partners.delete(id);
    for (const id of partners) all.add(id);
    if (partners.size === 0) break;
    // The attempts' other events: the tenant's, since its clears name them or they were read in its
    // events (by id alone, as above).
    const deleted = await trx
      .deleteFrom("events")
      .where("id", "in", [...partners])
      .returning(["id", "session", "attempt"])
      .execute();
    removed.events += deleted.length;
    const found = new Map(deleted.map((e) => [e.id, e]));
    // One gone already still has what hangs off it removed.
    next = [...partners].map((id) => found.get(id) ?? { id, session: null, attempt: null });
  }
  if (all.size === 0) return;
  const ids = [...all];
  /** The rows of `table` that hang off the removed events. */
  const onEvents = async (table: "feedback" | "feedback_resolutions" | "idempotency") =>
    count(
      await trx
        .deleteFrom(table)
        .where("tenant_id", "=", tenantId)
        .where("event_id", "in", ids)
        .executeTakeFirst(),
    );
  removed.observations += await onEvents("feedback");
  removed.resolutions += await onEvents("feedback_resolutions");
  removed.idempotentAnswers += await onEvents("idempotency");
}

/**
 * The tenant's degraded events of the same attempts as `events` (same session and attempt
 * fingerprint, which holds the email hash and the network): an erasure takes them with the attempt
 * even when they do not match the subject themselves, as degraded events recorded before their email
 * hash and network were (or whose request could not be read) do not.
 */
async function degradedOfAttempts(
  trx: Kysely<Database>,
  tenantId: string,
  events: readonly GoneEvent[],
): Promise<string[]> {
  const attempts = new Set<string>();
  for (const e of events) if (e.session !== null && e.attempt !== null) attempts.add(attemptKey(e));
  if (attempts.size === 0) return [];
  const sessions = [...new Set(events.flatMap((e) => (e.session === null ? [] : [e.session])))];
  // On events_session; the attempt is compared here (a pair per event, not every combination).
  const rows = await trx
    .selectFrom("events")
    .select(["id", "session", "attempt"])
    .where("tenant_id", "=", tenantId)
    .where("session", "in", sessions)
    .where("degraded", "=", 1)
    .execute();
  return rows.filter((r) => attempts.has(attemptKey(r))).map((r) => r.id);
}

const attemptKey = (e: Pick<GoneEvent, "session" | "attempt">): string =>
  JSON.stringify([e.session, e.attempt]);

/**
 * Drops the partitions whose every event is past its tenant's retention: a tenant with events in one
 * and no cutoff, or a cutoff before the partition's end, keeps it (its events then go row by row).
 *
 * A partition is detached first (DETACH … CONCURRENTLY: verify's inserts and reads go on), which
 * takes all its events out at once; writers holding one of them (SqlRuntime.holdRows) have finished
 * by then, and no new one can find them. Then what hangs off its events goes (removeHangingOff), and
 * the table is dropped. A pass stopped between those steps leaves the table detached: the next pass
 * finds it and goes on.
 */
async function dropExpiredPartitions(
  rt: SqlRuntime,
  m: PartitionMaintenance,
  cutoffs: ReadonlyMap<string, number | undefined>,
  removed: RemovedRows,
  signal: AbortSignal | undefined,
  windowEnd: AbortSignal | undefined,
): Promise<void> {
  for (const partition of await m.list()) {
    if (signal?.aborted) return;
    if (!candidate(partition, cutoffs)) continue;
    if (partition.state === "attached") {
      // Past the window's end no week is begun; one begun (detached) is finished.
      if (windowEnd?.aborted) continue;
      if (!(await expired(m, partition, cutoffs))) continue;
    }
    await m.detach(partition);
    // The week's key read once in order, paced (its leaves sequentially): what follows probes it
    // once for every row that may hang off an event, and cold, each probe was a random read.
    let held = 0;
    for (let after = ""; ; ) {
      if (signal?.aborted) return;
      const started = performance.now();
      const { last, read } = await m.readKeys(partition.name, after, KEYS_PER_READ);
      held += read;
      if (last === undefined || read < KEYS_PER_READ) break;
      after = last;
      await restAfter(started, rt.removalPace.rest);
    }
    if (!(await removeHangingOff(rt, m, partition.name, removed, signal))) return;
    if (signal?.aborted) return;
    await m.drop(partition.name);
    removed.events += held;
  }
}

/**
 * Whether a pass has anything to do with the partition: finish it (left detached by a pass cut
 * short), or see whether it is past retention, which needs it to end by the earliest cutoff of all
 * (so no week still to come is dropped for being empty, whatever the tenants' cutoffs).
 */
function candidate(partition: EventPartition, cutoffs: ReadonlyMap<string, number | undefined>): boolean {
  if (partition.state !== "attached") return true;
  const earliest = Math.min(...[...cutoffs.values()].filter((c): c is number => c !== undefined));
  // No cutoff at all (every tenant keeps its events): Infinity, and nothing goes.
  return partition.to !== undefined && Number.isFinite(earliest) && partition.to <= earliest;
}

/** Whether every tenant with events in the partition has a cutoff at or past its end. */
async function expired(
  m: PartitionMaintenance,
  partition: EventPartition,
  cutoffs: ReadonlyMap<string, number | undefined>,
): Promise<boolean> {
  const end = partition.to;
  if (end === undefined) return false;
  for (const tenantId of await m.tenantsIn(partition.name)) {
    const cutoff = cutoffs.get(tenantId);
    if (cutoff === undefined || cutoff < end) return false;
  }
  return true;
}

/** The rows that hang off an event: the table, the column naming the event, and what they count as. */
const HANGING: readonly {
  table: HangingTable;
  column: string;
  kind: Exclude<keyof RemovedRows, "events">;
}[] = [
  { table: "event_clears", column: "event_id", kind: "clears" },
  { table: "event_clears", column: "reverify_event_id", kind: "clears" },
  { table: "challenges", column: "event_id", kind: "challenges" },
  { table: "feedback", column: "event_id", kind: "observations" },
  { table: "feedback_resolutions", column: "event_id", kind: "resolutions" },
  { table: "idempotency", column: "event_id", kind: "idempotentAnswers" },
];

/** Pages of a table read per transaction when removing what hangs off a detached week (2 MB). */
const PAGES_PER_CHUNK = 250;
/** Keys of a detached week read at a time before its rows are probed (about 15 MB of its index). */
const KEYS_PER_READ = 200_000;

/**
 * What hangs off the events of a detached partition, table by table, read in page order (their
 * heaps sequentially, the partition only through its key's index, never its own rows), a range of
 * pages a transaction, resting as the row-by-row removal rests. Rows added to a table meanwhile
 * cannot hang off those events (no writer can find them any more), so each table is read up to the
 * pages it had. With an attempt's clear goes its other event, still in `events`, with what hangs off
 * it. Resolves false when `signal` stopped it.
 */
async function removeHangingOff(
  rt: SqlRuntime,
  m: PartitionMaintenance,
  partition: string,
  removed: RemovedRows,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  for (const { table, column, kind } of HANGING) {
    const pages = await m.pages(table);
    for (let from = 0; from < pages; from += PAGES_PER_CHUNK) {
      if (signal?.aborted) return false;
      const started = performance.now();
      await rt.writeTransaction(async (trx) => {
        const rows = await m.deleteHangingOff(trx, partition, table, column, [from, from + PAGES_PER_CHUNK]);
        removed[kind] += rows.length;
        const partners = new Map<string, string[]>();
        for (const r of rows) {
          const other = column === "event_id" ? r.reverify_event_id : r.event_id;
          if (table === "event_clears" && other)
            partners.set(r.tenant_id, [...(partners.get(r.tenant_id) ?? []), other]);
        }
        for (const [tenantId, ids] of partners) {
          removed.events += count(
            await trx
              .deleteFrom("events")
              .where("tenant_id", "=", tenantId)
              .where("id", "in", ids)
              .executeTakeFirst(),
          );
          const gone = ids.map((id) => ({ id, session: null, attempt: null }));
          await removeAround(trx, tenantId, gone, removed, false);
        }
      });
      await restAfter(started, rt.removalPace.rest);
    }
  }
  return true;
}

const count = (res: { numDeletedRows: bigint }): number => Number(res.numDeletedRows);

/**
 * Inside a write transaction: whether the tenant holds the event, held until the transaction ends
 * (SqlRuntime.holdRows), so that a removal running at the same time waits for this transaction and
 * then removes what it wrote, or has removed the event already.
 */
export async function eventHeld(
  rt: SqlRuntime,
  trx: Kysely<Database>,
  tenantId: string,
  eventId: string,
): Promise<boolean> {
  const row = await rt
    .holdRows(
      trx.selectFrom("events").select("id").where("id", "=", eventId).where("tenant_id", "=", tenantId),
    )
    .executeTakeFirst();
  return row !== undefined;
}
