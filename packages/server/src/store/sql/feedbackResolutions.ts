import type { ObservationStatus } from "../../domain.js";
import type { FeedbackResolution, FeedbackStore, ResolveOutcome } from "../interfaces.js";
import type { Database } from "../schema.js";
import { eventHeld } from "./eventRemoval.js";
import { guard, observationFromRow } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

function resolutionFromRow(r: Database["feedback_resolutions"]): FeedbackResolution {
  return {
    tenantId: r.tenant_id,
    feedbackId: r.feedback_id,
    eventId: r.event_id,
    resolution: r.resolution as FeedbackResolution["resolution"],
    note: r.note,
    keyId: r.key_id,
    resolvedAt: Number(r.resolved_at),
    superseded: JSON.parse(r.superseded) as string[],
  };
}

/** Resolving quarantined observations on SQL: the append-only record and the status it sets. */
export function createFeedbackResolutions(
  rt: SqlRuntime,
): Pick<FeedbackStore, "get" | "resolve" | "resolutionsForEvent"> {
  const { db } = rt;
  return {
    get: (tenantId, feedbackId) =>
      guard("feedback.get", async () => {
        const row = await db
          .selectFrom("feedback")
          .selectAll()
          .where("tenant_id", "=", tenantId)
          .where("feedback_id", "=", feedbackId)
          .executeTakeFirst();
        return row && observationFromRow(row);
      }),
    resolve: (resolution, conflictingOutcomes) =>
      guard("feedback.resolve", () =>
        rt.writeTransaction(async (trx): Promise<ResolveOutcome> => {
          const { tenantId, eventId, feedbackId } = resolution;
          // The same lock as append: an observation arriving meanwhile sees the statuses set here.
          await rt.serialize(trx, `feedback:${tenantId}:${eventId}`);
          // Held until commit, as append holds it: a removal meanwhile takes the resolution too.
          if (!(await eventHeld(rt, trx, tenantId, eventId))) return { kind: "unknown" };
          const earlier = await trx
            .selectFrom("feedback_resolutions")
            .selectAll()
            .where("tenant_id", "=", tenantId)
            .where("feedback_id", "=", feedbackId)
            .executeTakeFirst();
          if (earlier) return { kind: "already_resolved", resolution: resolutionFromRow(earlier) };
          const target = await trx
            .selectFrom("feedback")
            .select("status")
            .where("tenant_id", "=", tenantId)
            .where("event_id", "=", eventId)
            .where("feedback_id", "=", feedbackId)
            .executeTakeFirst();
          if (!target) return { kind: "unknown" };
          if (target.status !== "quarantined") {
            return { kind: "not_quarantined", status: target.status as ObservationStatus };
          }
          const superseded =
            resolution.resolution === "reject" || conflictingOutcomes.length === 0
              ? []
              : (
                  await trx
                    .selectFrom("feedback")
                    .select("feedback_id")
                    .where("tenant_id", "=", tenantId)
                    .where("event_id", "=", eventId)
                    .where("status", "=", "effective")
                    .where("outcome", "in", [...conflictingOutcomes])
                    .orderBy("seq")
                    .execute()
                ).map((r) => r.feedback_id);
          // The primary key is the once-only rule even where `serialize` is not (a second writer
          // inserting first makes this insert a no-op, and this transaction changes nothing).
          const inserted = await trx
            .insertInto("feedback_resolutions")
            .values({
              tenant_id: tenantId,
              feedback_id: feedbackId,
              event_id: eventId,
              resolution: resolution.resolution,
              note: resolution.note,
              key_id: resolution.keyId,
              resolved_at: resolution.resolvedAt,
              superseded: JSON.stringify(superseded),
            })
            .onConflict((oc) => oc.columns(["tenant_id", "feedback_id"]).doNothing())
            .returning("feedback_id")
            .executeTakeFirst();
          if (!inserted) {
            const winner = await trx
              .selectFrom("feedback_resolutions")
              .selectAll()
              .where("tenant_id", "=", tenantId)
              .where("feedback_id", "=", feedbackId)
              .executeTakeFirstOrThrow();
            return { kind: "already_resolved", resolution: resolutionFromRow(winner) };
          }
          if (superseded.length > 0) {
            await trx
              .updateTable("feedback")
              .set({ status: "superseded" })
              .where("tenant_id", "=", tenantId)
              .where("feedback_id", "in", superseded)
              .execute();
          }
          await trx
            .updateTable("feedback")
            .set({ status: resolution.resolution === "accept" ? "effective" : "rejected" })
            .where("tenant_id", "=", tenantId)
            .where("feedback_id", "=", feedbackId)
            .execute();
          return { kind: "resolved", resolution: { ...resolution, superseded } };
        }),
      ),
    resolutionsForEvent: (tenantId, eventId) =>
      guard("feedback.resolutionsForEvent", async () =>
        (
          await db
            .selectFrom("feedback_resolutions")
            .selectAll()
            .where("tenant_id", "=", tenantId)
            .where("event_id", "=", eventId)
            .orderBy("resolved_at")
            .orderBy("feedback_id")
            .execute()
        ).map(resolutionFromRow),
      ),
  };
}
