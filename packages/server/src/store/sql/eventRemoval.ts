import type { Expression, ExpressionBuilder, Kysely, SqlBool } from "kysely";
import type { ErasureSubject, EventRemovalStore, RemovedRows, RetentionCutoff } from "../interfaces.js";
import type { Database } from "../schema.js";
import { purgeInChunks } from "./purge.js";
import { guard } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

type EventFilter = (eb: ExpressionBuilder<Database, "events">) => Expression<SqlBool>;

const noneRemoved = (): RemovedRows => ({
  events: 0,
  challenges: 0,
  clears: 0,
  observations: 0,
  resolutions: 0,
  idempotentAnswers: 0,
});

/** Retention and erasure on SQL (EventRemovalStore). */
export function createEventRemovalStore(rt: SqlRuntime): EventRemovalStore {
  const { db } = rt;
  const removeWhere = async (
    tenantId: string,
    filter: EventFilter,
    removed: RemovedRows,
    signal: AbortSignal | undefined,
    alone?: string,
  ) =>
    purgeInChunks(
      rt,
      async (trx, limit) => {
        // Another process removing the same events would only wait for its row locks, then find
        // them gone: it leaves the work to that one until its next pass.
        if (alone !== undefined && !(await rt.tryExclusive(trx, alone))) return 0;
        return removeChunk(trx, tenantId, filter, limit, removed);
      },
      { ...rt.removalPace, transaction: true, signal },
    );
  return {
    olderThan: (before: RetentionCutoff, signal) =>
      guard("removal.olderThan", async () => {
        const removed = noneRemoved();
        // Tenant by tenant: each chunk is then a range of the (tenant_id, created_at) index.
        const tenants = await db.selectFrom("tenants").select("id").orderBy("id").execute();
        for (const { id } of tenants) {
          if (signal?.aborted) break;
          const cutoff = typeof before === "number" ? before : await before(id);
          if (cutoff === undefined) continue;
          await removeWhere(id, (eb) => eb("created_at", "<", cutoff), removed, signal, `retention\n${id}`);
        }
        return removed;
      }),
    erase: (tenantId, subject, signal) =>
      guard("removal.erase", () =>
        rt.overwritingDeleted(async () => {
          const removed = noneRemoved();
          await removeWhere(tenantId, subjectFilter(subject), removed, signal);
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

/**
 * One chunk, inside one write transaction: up to `limit` of the tenant's events that match, the other
 * event of each one's attempt, and everything on them. Resolves how many matching events it removed.
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
): Promise<number> {
  // By id alone: ids are unique across tenants, and the subquery reads only the tenant's. With the
  // tenant here too, SQLite read all the tenant's events (through events_session) for every chunk.
  const matching = await trx
    .deleteFrom("events")
    .where("id", "in", (eb) =>
      eb.selectFrom("events").select("id").where("tenant_id", "=", tenantId).where(filter).limit(limit),
    )
    .returning("id")
    .execute();
  removed.events += matching.length;
  const all = new Set(matching.map((r) => r.id));
  let next = [...all];
  // An attempt is its first event and the re-verify that redeemed its clear: one goes, both go.
  while (next.length > 0) {
    removed.challenges += count(
      await trx
        .deleteFrom("challenges")
        .where("tenant_id", "=", tenantId)
        .where("event_id", "in", next)
        .executeTakeFirst(),
    );
    // Two statements, each on its own index: as one OR, SQLite read every clear of the tenant.
    const clears = [];
    for (const column of ["event_id", "reverify_event_id"] as const) {
      clears.push(
        ...(await trx
          .deleteFrom("event_clears")
          .where("tenant_id", "=", tenantId)
          .where(column, "in", next)
          .returning(["event_id", "reverify_event_id"])
          .execute()),
      );
    }
    removed.clears += clears.length;
    next = [...new Set(clears.flatMap((c) => [c.event_id, c.reverify_event_id]))].filter(
      (id): id is string => id !== null && !all.has(id),
    );
    for (const id of next) all.add(id);
    // The attempts' other events: the tenant's, since its clears name them (by id alone, as above).
    if (next.length > 0) {
      removed.events += count(await trx.deleteFrom("events").where("id", "in", next).executeTakeFirst());
    }
  }
  if (all.size === 0) return 0;
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
  return matching.length;
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
