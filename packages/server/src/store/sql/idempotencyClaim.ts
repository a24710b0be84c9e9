import type { Kysely } from "kysely";
import type { IdempotencyKey, IdempotentResponse } from "../interfaces.js";
import type { Database } from "../schema.js";
import { responseFromRow } from "./rows.js";

export type IdempotencyClaim = IdempotencyKey & { response: IdempotentResponse; expiresAt: number };

/**
 * Claims an idempotency key inside the caller's transaction: inserts it, or takes over a row whose
 * retention has passed. Undefined when claimed; otherwise the replay or conflict outcome.
 */
export async function claimIdempotencyKey(
  trx: Kysely<Database>,
  idem: IdempotencyClaim,
  now: number,
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
    })
    .onConflict((oc) =>
      oc
        .columns(["tenant_id", "operation", "key"])
        .doUpdateSet((eb) => ({
          fingerprint: eb.ref("excluded.fingerprint"),
          status_code: eb.ref("excluded.status_code"),
          body: eb.ref("excluded.body"),
          created_at: eb.ref("excluded.created_at"),
          expires_at: eb.ref("excluded.expires_at"),
        }))
        .where("idempotency.expires_at", "<=", now),
    )
    .returning("key")
    .executeTakeFirst();
  if (claimed) return undefined;
  const existing = await trx
    .selectFrom("idempotency")
    .select(["fingerprint", "status_code", "body"])
    .where("tenant_id", "=", idem.tenantId)
    .where("operation", "=", idem.operation)
    .where("key", "=", idem.key)
    .executeTakeFirstOrThrow();
  if (existing.fingerprint !== idem.response.fingerprint) return { kind: "conflict" };
  return { kind: "replay", response: responseFromRow(existing) };
}
