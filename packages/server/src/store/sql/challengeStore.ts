import type { ChallengeStore } from "../interfaces.js";
import { challengeFromRow, guard } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

/** Challenges on SQL: clearing and redeeming are single conditional updates. */
export function createChallengeStore(rt: SqlRuntime): ChallengeStore {
  const { db } = rt;
  return {
    insert: (c) =>
      guard("challenges.insert", () =>
        rt.write(async (conn) => {
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
            })
            .execute();
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
    // One conditional UPDATE each: the conditions and the change are one atomic statement.
    clear: (tenantId, id, session, now, proofRef) =>
      guard("challenges.clear", () =>
        rt.write(async (conn) => {
          const row = await conn
            .updateTable("challenges")
            .set({ cleared_at: now, proof_ref: proofRef ?? null })
            .where("tenant_id", "=", tenantId)
            .where("id", "=", id)
            .where("session", "=", session)
            .where("cleared_at", "is", null)
            .where("expires_at", ">", now)
            .returningAll()
            .executeTakeFirst();
          return row ? challengeFromRow(row) : undefined;
        }),
      ),
    redeem: (tenantId, id, session, clearedSince, now) =>
      guard("challenges.redeem", () =>
        rt.write(async (conn) => {
          const res = await conn
            .updateTable("challenges")
            .set({ redeemed_at: now })
            .where("tenant_id", "=", tenantId)
            .where("id", "=", id)
            .where("session", "=", session)
            .where("cleared_at", ">=", clearedSince)
            .where("redeemed_at", "is", null)
            .executeTakeFirst();
          return Number(res.numUpdatedRows) === 1;
        }),
      ),
  };
}
