import { type CompiledQuery, type Kysely, sql } from "kysely";
import { precompile } from "../precompiled.js";
import type { Database } from "../schema.js";
import { takeOverExpired } from "./idempotencyClaim.js";

export type KeyWithTenantRow = Database["api_keys"] & {
  t_raw_pii: number;
  t_log_only: number;
  t_created_at: number;
};

/** The verify hot path's fixed-shape statements, compiled once (see precompiled.ts). */
export function hotStatements(db: Kysely<Database>) {
  const hitCounterStatements = new Map<number, (values: Record<string, unknown>) => CompiledQuery>();
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
    /**
     * Upserts the current buckets of `n` counters in one statement and reads each one's previous
     * bucket in RETURNING. Compiled once per `n`; rows come back in any order, so each carries its name.
     */
    hitCounters: (n: number) => {
      let statement = hitCounterStatements.get(n);
      if (!statement) {
        const names = Array.from({ length: n }, (_, i) => [
          `name${i}`,
          `expiresAt${i}`,
          `previousExpiresAt${i}`,
        ]).flat();
        statement = precompile(names, (params: Record<string, never>) => {
          const p = (key: string) => params[key] as never;
          const previousOf = sql<number>`case ${sql.ref("counters.name")} ${sql.join(
            Array.from(
              { length: n },
              (_, i) => sql`when ${p(`name${i}`)} then cast(${p(`previousExpiresAt${i}`)} as bigint)`,
            ),
            sql` `,
          )} end`;
          return db
            .insertInto("counters")
            .values(
              Array.from({ length: n }, (_, i) => ({
                expires_at: p(`expiresAt${i}`),
                name: p(`name${i}`),
                count: 1,
              })),
            )
            .onConflict((oc) =>
              oc
                .columns(["expires_at", "name"])
                .doUpdateSet((eb) => ({ count: eb("counters.count", "+", 1) })),
            )
            .returning((eb) => [
              "counters.name",
              "counters.count",
              eb
                .selectFrom("counters as prev")
                .select("prev.count")
                .whereRef("prev.name", "=", "counters.name")
                .where("prev.expires_at", "=", previousOf)
                .as("previous"),
            ]);
        });
        hitCounterStatements.set(n, statement);
      }
      return statement;
    },
    // Event ids are unique, so a conflict is only ever a retry of the same event (the degraded-event
    // queue re-sends a write whose answer was lost): it counts as written. No conflict target: on
    // PostgreSQL the key is (id, created_at) (postgres/eventPartitions.ts); firstOfItsId keeps a
    // degraded event's keyed id, which carries no time, to one row (degraded events are written only
    // by this statement, never by the two below).
    insertEvent: precompile(EVENT_COLUMNS, (p) =>
      db
        .insertInto("events")
        .columns(EVENT_COLUMNS)
        .expression(eventValues(db, p).where(firstOfItsId(p)))
        .onConflict((oc) => oc.doNothing()),
    ),
    /**
     * The same insert, made only while the event's API key is not revoked: one statement, so the
     * check and the write see the same moment.
     */
    insertEventIfKeyActive: precompile(EVENT_COLUMNS, (p) =>
      db
        .insertInto("events")
        .columns(EVENT_COLUMNS)
        .expression(eventValues(db, p).where(keyIsUnrevoked(p.key_id)))
        .onConflict((oc) => oc.doNothing()),
    ),
    /**
     * PostgreSQL only (data-modifying CTE): claims an idempotency key and writes the event in one
     * statement, both only while the event's API key is not revoked. The claim inserts the key, or
     * takes over a row whose retention has passed (as claimIdempotencyKey does); a live row of a
     * concurrent claim makes PostgreSQL wait for that transaction, then leaves it alone. The event is
     * inserted only when the claim took: one affected row means recorded; none means the key was held
     * (replay or conflict) or the API key is revoked, told apart by the caller's follow-up reads.
     */
    claimAndInsertEvent: precompile([...EVENT_COLUMNS, ...CLAIM_PARAMS], (p) =>
      db
        .with("claim", (w) =>
          w
            .insertInto("idempotency")
            .columns([
              "tenant_id",
              "operation",
              "key",
              "fingerprint",
              "status_code",
              "body",
              "created_at",
              "expires_at",
              "event_id",
            ])
            .expression(
              w
                .selectNoFrom((eb) => [
                  eb.cast(eb.val(p.tenant_id as never), "text").as("tenant_id"),
                  eb.cast(eb.val(p.i_operation as never), "text").as("operation"),
                  eb.cast(eb.val(p.i_key as never), "text").as("key"),
                  eb.cast(eb.val(p.i_fingerprint as never), "text").as("fingerprint"),
                  eb.cast(eb.val(p.i_status_code as never), "integer").as("status_code"),
                  eb.cast(eb.val(p.i_body as never), "text").as("body"),
                  eb.cast(eb.val(p.created_at as never), "bigint").as("created_at"),
                  eb.cast(eb.val(p.i_expires_at as never), "bigint").as("expires_at"),
                  eb.cast(eb.val(p.id as never), "text").as("event_id"),
                ])
                .where(keyIsUnrevoked(p.key_id)),
            )
            .onConflict((oc) => takeOverExpired(oc, p.created_at))
            .returning("key"),
        )
        .insertInto("events")
        .columns(EVENT_COLUMNS)
        .expression(eventValues(db, p).where(sql<boolean>`exists (select 1 from claim)`))
        .onConflict((oc) => oc.doNothing()),
    ),
    /** One counter's buckets (start-up warm-up of the connections counters run on). */
    readCounter: precompile(["name"], (p) =>
      db.selectFrom("counters").select(["count", "expires_at"]).where("name", "=", p.name),
    ),
    /** Whether a key exists unrevoked (verify's replay path, and telling a lost insert from a refused one). */
    keyIsActive: precompile(["keyId"], (p) =>
      db.selectFrom("api_keys").select("id").where("id", "=", p.keyId).where("revoked_at", "is", null),
    ),
  };
}

/** The idempotency row's own values in claimAndInsertEvent (tenant and time come from the event). */
const CLAIM_PARAMS = [
  "i_operation",
  "i_key",
  "i_fingerprint",
  "i_status_code",
  "i_body",
  "i_expires_at",
] as const;

/**
 * An event's values as a one-row SELECT, each cast to its column's type: in INSERT … SELECT
 * PostgreSQL cannot infer a parameter's type from the column it lands in.
 */
const eventValues = (db: Kysely<Database>, p: Record<(typeof EVENT_COLUMNS)[number], never>) =>
  db.selectNoFrom((eb) =>
    EVENT_COLUMNS.map((c) => eb.cast(eb.val(p[c] as never), EVENT_COLUMN_TYPES[c]).as(c)),
  );

/**
 * A degraded event's id may be keyed (operations/verify/degraded.ts: the same for every copy of one
 * attempt) and then carries no time, so on PostgreSQL (key (id, created_at)) copies written at
 * different times would not conflict: it is written only while no event has it. Every write of a
 * degraded event first takes a lock on its id in its transaction (verifyWriteStores.ts, record), so
 * this statement's snapshot sees any copy committed before it; other events skip the check.
 */
const firstOfItsId = (p: Record<(typeof EVENT_COLUMNS)[number], never>) =>
  sql<boolean>`case when cast(${p.degraded} as integer) = 1 then not exists (select 1 from events e where e.id = cast(${p.id} as text)) else 1 = 1 end`;

/** The condition that an API key exists and is not revoked, evaluated in the statement that writes. */
const keyIsUnrevoked = (keyId: unknown) =>
  sql<boolean>`exists (select 1 from api_keys where api_keys.id = ${keyId} and api_keys.revoked_at is null)`;

export const EVENT_COLUMNS = [
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
  "attempt",
  "decided_by",
  "risk_estimate",
  "risk_low",
  "risk_high",
  "risk_raised",
  "email_hash",
  "network",
  "reason_codes",
] as const satisfies readonly (keyof Database["events"])[];

/** The events table's column types (migrations.ts), for casts in INSERT … SELECT. */
export const EVENT_COLUMN_TYPES = {
  id: "text",
  tenant_id: "text",
  key_id: "text",
  created_at: "bigint",
  action: "text",
  surface: "text",
  session: "text",
  decision: "text",
  would_be_decision: "text",
  actor_type: "text",
  confidence: "double precision",
  reasons: "text",
  degraded: "integer",
  enforcement_mode: "text",
  costs: "text",
  signals: "text",
  engine_version: "text",
  policy_version: "text",
  attempt: "text",
  decided_by: "text",
  risk_estimate: "double precision",
  risk_low: "double precision",
  risk_high: "double precision",
  risk_raised: "integer",
  email_hash: "text",
  network: "text",
  reason_codes: "text",
} as const satisfies Record<(typeof EVENT_COLUMNS)[number], string>;
