import type { Kysely, OnConflictBuilder } from "kysely";
import type { IdempotencyKey, IdempotentResponse } from "../interfaces.js";
import type { Database } from "../schema.js";
import { responseFromRow } from "./rows.js";

export type IdempotencyClaim = IdempotencyKey & { response: IdempotentResponse; expiresAt: number };

/**
 * On a claim's conflict: takes over the row only if its retention has passed by `now`; a live row
 * (another answer, or a concurrent claim PostgreSQL waited for) is left alone and nothing is returned.
 */
export function takeOverExpired(oc: OnConflictBuilder<Database, "idempotency">, now: number) {
  return oc
    .columns(["tenant_id", "operation", "key"])
    .doUpdateSet((eb) => ({
      fingerprint: eb.ref("excluded.fingerprint"),
      status_code: eb.ref("excluded.status_code"),
      body: eb.ref("excluded.body"),
      created_at: eb.ref("excluded.created_at"),
      expires_at: eb.ref("excluded.expires_at"),
      event_id: eb.ref("excluded.event_id"),
    }))
    .where("idempotency.expires_at", "<=", now);
}

/**
 * Claims an idempotency key inside the caller's transaction: inserts it, or takes over a row whose
 * retention has passed. `eventId` is the event the answer replays (removed with it). Undefined when
 * claimed; otherwise the replay or conflict outcome.
 */
export async function claimIdempotencyKey(
  trx: Kysely<Database>,
  idem: IdempotencyClaim,
  now: number,
  eventId: string,
): Promise<{ kind: "replay"; response: IdempotentResponse } | { kind: "conflict" } | undefined> {
  const claimed = await trx
    .insertInto("idempotency")
    .values({
      tenant_id: idem.tenantId,
      operation: idem.operation,
      key: idem.key,
      fingerprint: idem.response.fingerprint,
      status_code: idem.response.statusCode,
      body: JSON.stringify(idem.response.body),
      created_at: now,
      expires_at: idem.expiresAt,
      event_id: eventId,
    })
    .onConflict((oc) => takeOverExpired(oc, now))
    .returning("key")
    .executeTakeFirst();
  if (claimed) return undefined;
  // Not claimed: a live answer holds the key (an expired one would have been taken over above).
  const existing = await readIdempotentResponse(trx, idem);
  if (!existing) throw new Error("idempotency key neither claimed nor held");
  if (existing.fingerprint !== idem.response.fingerprint) return { kind: "conflict" };
  return { kind: "replay", response: existing };
}

/** The answer stored under a key; with `liveAt`, only if its retention has not passed by then. */
export async function readIdempotentResponse(
  db: Kysely<Database>,
  key: IdempotencyKey,
  liveAt?: number,
): Promise<IdempotentResponse | undefined> {
  let qb = db
    .selectFrom("idempotency")
    .select(["fingerprint", "status_code", "body"])
    .where("tenant_id", "=", key.tenantId)
    .where("operation", "=", key.operation)
    .where("key", "=", key.key);
  if (liveAt !== undefined) qb = qb.where("expires_at", ">", liveAt);
  const row = await qb.executeTakeFirst();
  return row ? responseFromRow(row) : undefined;
}
