import type { Kysely } from "kysely";
import type { AppendOutcome, FeedbackStore, LedgerFilter, LedgerRow, Observation } from "../interfaces.js";
import type { Database } from "../schema.js";
import { eventHeld } from "./eventRemoval.js";
import { createFeedbackResolutions } from "./feedbackResolutions.js";
import { claimIdempotencyKey } from "./idempotencyClaim.js";
import { guard, observationFromRow } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

/** The feedback ledger on SQL: append (atomic, serialized per event), reads and aggregates. */
export function createFeedbackStore(rt: SqlRuntime): FeedbackStore {
  const { db } = rt;
  return {
    ...createFeedbackResolutions(rt),
    append: (obs, conflictingOutcomes, idem) =>
      guard("feedback.append", () =>
        // One write transaction; SQLite's BEGIN IMMEDIATE serializes it with every other writer, so
        // the quarantine decision below sees every observation accepted before it.
        rt.writeTransaction(async (trx): Promise<AppendOutcome> => {
          // Quarantine decisions on one event are serialized across processes.
          await rt.serialize(trx, `feedback:${obs.tenantId}:${obs.eventId}`);
          // Held until commit: retention or an erasure cannot remove the event under this append.
          if (!(await eventHeld(rt, trx, obs.tenantId, obs.eventId))) return { kind: "unknown_event" };
          if (idem) {
            const claim = await claimIdempotencyKey(trx, idem, obs.receivedAt, obs.eventId);
            if (claim) return claim;
          }
          const same = await trx
            .selectFrom("feedback")
            .select("feedback_id")
            .where("tenant_id", "=", obs.tenantId)
            .where("event_id", "=", obs.eventId)
            .where("identity", "=", obs.identity)
            .executeTakeFirst();
          if (same) return { kind: "duplicate", feedbackId: same.feedback_id };
          const conflict =
            conflictingOutcomes.length === 0
              ? undefined
              : await trx
                  .selectFrom("feedback")
                  .select("feedback_id")
                  .where("tenant_id", "=", obs.tenantId)
                  .where("event_id", "=", obs.eventId)
                  .where("status", "=", "effective")
                  .where("outcome", "in", [...conflictingOutcomes])
                  .orderBy("seq")
                  .executeTakeFirst();
          const last = await trx
            .selectFrom("feedback")
            .select((eb) => eb.fn.max("seq").as("seq"))
            .where("tenant_id", "=", obs.tenantId)
            .where("event_id", "=", obs.eventId)
            .executeTakeFirst();
          const observation: Observation = {
            ...obs,
            status: conflict ? "quarantined" : "effective",
            conflictsWith: conflict?.feedback_id ?? null,
          };
          await trx
            .insertInto("feedback")
            .values({
              feedback_id: observation.feedbackId,
              tenant_id: observation.tenantId,
              event_id: observation.eventId,
              identity: observation.identity,
              outcome: observation.outcome,
              value: observation.value,
              unit: observation.unit,
              source: observation.source,
              observed_at: observation.observedAt,
              received_at: observation.receivedAt,
              status: observation.status,
              conflicts_with: observation.conflictsWith,
              seq: Number(last?.seq ?? 0) + 1,
            })
            .execute();
          return { kind: "appended", observation };
        }),
      ),
    listForEvent: (tenantId, eventId) =>
      guard("feedback.listForEvent", async () =>
        (
          await db
            .selectFrom("feedback")
            .selectAll()
            .where("tenant_id", "=", tenantId)
            .where("event_id", "=", eventId)
            .orderBy("seq")
            .execute()
        ).map(observationFromRow),
      ),
    aggregate: (tenantId, filter) =>
      guard("feedback.aggregate", async () => {
        const rows = await rt.report(
          ledgerScope(db, tenantId, filter)
            .select((eb) => [
              "f.outcome",
              "f.unit",
              "f.status",
              eb.fn.countAll<number>().as("count"),
              eb.fn.coalesce(eb.fn.sum<number>("f.value"), eb.lit(0)).as("total"),
            ])
            .groupBy(["f.outcome", "f.unit", "f.status"])
            .compile(),
        );
        return rows.map(
          (r): LedgerRow => ({
            outcome: r.outcome,
            unit: r.unit,
            status: r.status as LedgerRow["status"],
            count: Number(r.count),
            total: Number(r.total),
          }),
        );
      }),
    quarantined: (tenantId, filter, limit, before) =>
      guard("feedback.quarantined", async () => {
        let page = ledgerScope(db, tenantId, filter);
        if (before) {
          page = page.where((eb) =>
            eb.or([
              eb("f.received_at", "<", before.receivedAt),
              eb.and([
                eb("f.received_at", "=", before.receivedAt),
                eb("f.feedback_id", "<", before.feedbackId),
              ]),
            ]),
          );
        }
        const rows = await rt.report(
          page
            .selectAll("f")
            .where("f.status", "=", "quarantined")
            .orderBy("f.received_at", "desc")
            .orderBy("f.feedback_id", "desc")
            .limit(limit)
            .compile(),
        );
        const refs = [
          ...new Set(rows.map((r) => r.conflicts_with).filter((id): id is string => id !== null)),
        ];
        const others =
          refs.length === 0
            ? []
            : await db
                .selectFrom("feedback")
                .selectAll()
                .where("tenant_id", "=", tenantId)
                .where("feedback_id", "in", refs)
                .execute();
        const byId = new Map(others.map((o) => [o.feedback_id, observationFromRow(o)]));
        return rows.map((r) => ({
          observation: observationFromRow(r),
          conflictsWith: r.conflicts_with === null ? undefined : byId.get(r.conflicts_with),
        }));
      }),
  };
}

/**
 * Observations of a tenant with observedAt in [since, until) and, when asked, whose event has the
 * action. Observations always belong to an existing event (feedback never creates one), so the
 * event table is read only for the action filter.
 */
function ledgerScope(db: Kysely<Database>, tenantId: string, filter: LedgerFilter) {
  let qb = db.selectFrom("feedback as f").where("f.tenant_id", "=", tenantId);
  if (filter.since !== undefined) qb = qb.where("f.observed_at", ">=", filter.since);
  if (filter.until !== undefined) qb = qb.where("f.observed_at", "<", filter.until);
  const { action } = filter;
  if (action !== undefined) {
    qb = qb.where((eb) =>
      eb.exists(
        eb
          .selectFrom("events as e")
          .select("e.id")
          .whereRef("e.id", "=", "f.event_id")
          .whereRef("e.tenant_id", "=", "f.tenant_id")
          .where("e.action", "=", action),
      ),
    );
  }
  return qb;
}
