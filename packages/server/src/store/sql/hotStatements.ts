import type { Kysely } from "kysely";
import { precompile } from "../precompiled.js";
import type { Database } from "../schema.js";

export type KeyWithTenantRow = Database["api_keys"] & {
  t_raw_pii: number;
  t_log_only: number;
  t_created_at: number;
};

/** The verify hot path's fixed-shape statements, compiled once (see precompiled.ts). */
export function hotStatements(db: Kysely<Database>) {
  return {
    findKey: precompile(["keyHash"], (p) =>
      db
        .selectFrom("api_keys")
        .innerJoin("tenants", "tenants.id", "api_keys.tenant_id")
        .select([
          "api_keys.id",
          "api_keys.tenant_id",
          "api_keys.key_hash",
          "api_keys.scopes",
          "api_keys.log_only",
          "api_keys.created_at",
          "api_keys.revoked_at",
          "tenants.raw_pii as t_raw_pii",
          "tenants.log_only as t_log_only",
          "tenants.created_at as t_created_at",
        ])
        .where("api_keys.key_hash", "=", p.keyHash),
    ),
    // Upserts the current bucket and reads the previous one in RETURNING: one statement per hit.
    hitCounter: precompile(["name", "expiresAt", "previousExpiresAt"], (p) =>
      db
        .insertInto("counters")
        .values({ expires_at: p.expiresAt, name: p.name, count: 1 })
        .onConflict((oc) =>
          oc.columns(["expires_at", "name"]).doUpdateSet((eb) => ({ count: eb("counters.count", "+", 1) })),
        )
        .returning((eb) => [
          "count",
          eb
            .selectFrom("counters as prev")
            .select("prev.count")
            .where("prev.expires_at", "=", p.previousExpiresAt)
            .where("prev.name", "=", p.name)
            .as("previous"),
        ]),
    ),
    insertEvent: precompile(EVENT_COLUMNS, (p) => db.insertInto("events").values(p)),
  };
}

const EVENT_COLUMNS = [
  "id",
  "tenant_id",
  "key_id",
  "created_at",
  "action",
  "surface",
  "session",
  "decision",
  "would_be_decision",
  "actor_type",
  "confidence",
  "reasons",
  "degraded",
  "enforcement_mode",
  "costs",
  "signals",
  "engine_version",
  "policy_version",
] as const satisfies readonly (keyof Database["events"])[];
