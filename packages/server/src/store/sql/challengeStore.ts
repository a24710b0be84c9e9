import type { ChallengeStore, ClearOutcome } from "../interfaces.js";
import { eventHeld } from "./eventRemoval.js";
import { challengeFromRow, guard, isUniqueViolation } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

/** Challenges on SQL: clearing is one conditional update (redeeming is part of events.record). */
export function createChallengeStore(rt: SqlRuntime): ChallengeStore {
  const { db } = rt;
  return {
    insert: (c) =>
      guard("challenges.insert", () =>
        rt.writeTransaction(async (conn) => {
          // Held until commit: retention or an erasure cannot remove the event under this insert.
          if (!(await eventHeld(rt, conn, c.tenantId, c.eventId))) return false;
          await conn
            .insertInto("challenges")
            .values({
              id: c.id,
              tenant_id: c.tenantId,
              event_id: c.eventId,
              session: c.session,
              method: c.method,
              difficulty: c.difficulty,
              seed: c.seed,
              instructions: JSON.stringify(c.instructions),
              issued_at: c.issuedAt,
              expires_at: c.expiresAt,
              cleared_at: c.clearedAt,
              redeemed_at: c.redeemedAt,
              proof_ref: c.proofRef,
              completion_key: c.completionKey,
              attempt: c.attempt,
              event_degraded: c.eventDegraded ? 1 : 0,
            })
            .execute();
          return true;
        }),
      ),
    get: (tenantId, id) =>
      guard("challenges.get", async () => {
        const row = await db
          .selectFrom("challenges")
          .selectAll()
          .where("tenant_id", "=", tenantId)
          .where("id", "=", id)
          .executeTakeFirst();
        return row ? challengeFromRow(row) : undefined;
      }),
    // One conditional UPDATE: the conditions and the change are one atomic statement; the unique
    // index on proof_ref refuses a provider object that already proved another clear.
    clear: (tenantId, id, session, now, proofRef, completionKey) =>
      guard("challenges.clear", () =>
        rt.write(async (conn): Promise<ClearOutcome> => {
          try {
            const row = await conn
              .updateTable("challenges")
              .set({ cleared_at: now, proof_ref: proofRef ?? null, completion_key: completionKey ?? null })
              .where("tenant_id", "=", tenantId)
              .where("id", "=", id)
              .where("session", "=", session)
              .where("cleared_at", "is", null)
              .where("expires_at", ">", now)
              .returningAll()
              .executeTakeFirst();
            return row ? { kind: "cleared", challenge: challengeFromRow(row) } : { kind: "not_clearable" };
          } catch (err) {
            if (proofRef !== undefined && isUniqueViolation(err)) return { kind: "proof_reused" };
            throw err;
          }
        }),
      ),
    eventClearUsed: (tenantId, eventId) =>
      guard("challenges.eventClearUsed", async () => {
        const row = await db
          .selectFrom("event_clears")
          .select("challenge_id")
          .where("tenant_id", "=", tenantId)
          .where("event_id", "=", eventId)
          .executeTakeFirst();
        return row !== undefined;
      }),
    proofUsed: (tenantId, proofRef) =>
      guard("challenges.proofUsed", async () => {
        const row = await db
          .selectFrom("challenges")
          .select("id")
          .where("proof_ref", "=", proofRef)
          .where("tenant_id", "=", tenantId)
          .executeTakeFirst();
        return row !== undefined;
      }),
  };
}
