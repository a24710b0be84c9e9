import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import { createPartitionsFunction, partitionEventsTable } from "./postgres/eventPartitions.js";
import {
  COMPATIBILITY_TABLE,
  requireServableSchema,
  SchemaAheadError,
  unknownExecutedMigrations,
} from "./schemaCompatibility.js";

export type Dialect = "sqlite" | "postgres";

/**
 * Migrations in code (no file discovery), written with the dialect-neutral schema builder; the few
 * dialect-specific table options are chosen by `dialect`.
 */
const migrationsFor = (dialect: Dialect): Record<string, Migration> => ({
  "0001_core": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("tenants")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("raw_pii", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("log_only", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
        .addColumn("key_hash", "text", (c) => c.notNull().unique())
        .addColumn("scopes", "text", (c) => c.notNull())
        .addColumn("log_only", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("revoked_at", "bigint")
        .execute();
      await db.schema.createIndex("api_keys_tenant").on("api_keys").column("tenant_id").execute();
      await db.schema
        .createTable("signing_keys")
        .addColumn("kid", "text", (c) => c.primaryKey())
        .addColumn("private_jwk", "text", (c) => c.notNull())
        .addColumn("public_jwk", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("retired_at", "bigint")
        .addColumn("publish_until", "bigint")
        .execute();
      // One B-tree keyed by (expires_at, name): lookups use the whole key (expires_at follows from the
      // bucket), purging is a range delete on its prefix, and SQLite keeps no separate rowid table.
      await db.schema
        .createTable("counters")
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("count", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("counters_pk", ["expires_at", "name"])
        .$call((t) => (dialect === "sqlite" ? t.modifyEnd(sql`without rowid`) : t))
        .execute();
      await db.schema
        .createTable("events")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("surface", "text")
        .addColumn("session", "text")
        .addColumn("decision", "text", (c) => c.notNull())
        .addColumn("would_be_decision", "text", (c) => c.notNull())
        .addColumn("actor_type", "text", (c) => c.notNull())
        .addColumn("confidence", "double precision", (c) => c.notNull())
        .addColumn("reasons", "text", (c) => c.notNull())
        .addColumn("degraded", "integer", (c) => c.notNull())
        .addColumn("enforcement_mode", "text", (c) => c.notNull())
        .addColumn("costs", "text", (c) => c.notNull())
        .addColumn("signals", "text", (c) => c.notNull())
        .addColumn("engine_version", "text", (c) => c.notNull())
        .addColumn("policy_version", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("events_tenant_time")
        .on("events")
        .columns(["tenant_id", "created_at"])
        .execute();
      await db.schema
        .createTable("idempotency")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("operation", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("fingerprint", "text", (c) => c.notNull())
        .addColumn("status_code", "integer", (c) => c.notNull())
        .addColumn("body", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("idempotency_pk", ["tenant_id", "operation", "key"])
        .execute();
      await db.schema.createIndex("idempotency_expiry").on("idempotency").column("expires_at").execute();
    },
  },
  "0002_feedback": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("feedback")
        .addColumn("feedback_id", "text", (c) => c.primaryKey())
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("identity", "text", (c) => c.notNull())
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("value", "double precision")
        .addColumn("unit", "text")
        .addColumn("source", "text")
        .addColumn("observed_at", "bigint", (c) => c.notNull())
        .addColumn("received_at", "bigint", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("conflicts_with", "text")
        // Acceptance order within the event, assigned inside the serialized append transaction.
        .addColumn("seq", "integer", (c) => c.notNull())
        .addUniqueConstraint("feedback_identity", ["tenant_id", "event_id", "identity"])
        .addUniqueConstraint("feedback_order", ["tenant_id", "event_id", "seq"])
        .execute();
      await db.schema
        .createIndex("feedback_tenant_observed")
        .on("feedback")
        .columns(["tenant_id", "observed_at"])
        .execute();
    },
  },
  "0003_challenges": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("challenges")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("session", "text", (c) => c.notNull())
        .addColumn("method", "text", (c) => c.notNull())
        .addColumn("difficulty", "integer")
        .addColumn("seed", "text")
        .addColumn("instructions", "text", (c) => c.notNull())
        .addColumn("issued_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .addColumn("cleared_at", "bigint")
        .addColumn("redeemed_at", "bigint")
        .execute();
    },
  },
  "0004_payment_preauth": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("tenants").addColumn("payment_secret_key", "text").execute();
      await db.schema.alterTable("challenges").addColumn("proof_ref", "text").execute();
      // A provider object proves at most one clear.
      await db.schema
        .createIndex("challenges_proof_ref")
        .on("challenges")
        .column("proof_ref")
        .unique()
        .execute();
    },
  },
  "0005_agents_and_policies": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("agent_operators")
        .addColumn("operator", "text", (c) => c.primaryKey())
        .addColumn("signature_agent", "text", (c) => c.notNull())
        .addColumn("keys", "text", (c) => c.notNull())
        .addColumn("fetch_directory", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("tenant_policies")
        .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("document", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("tenant_policies_pk", ["tenant_id", "version"])
        .execute();
    },
  },
  "0006_attempt_binding": {
    async up(db: Kysely<unknown>) {
      // The attempt a verify answered (operations/verify/attempt.ts), copied to the challenges issued
      // on it, so a re-verify redeems a clear only for the same attempt.
      await db.schema.alterTable("events").addColumn("attempt", "text").execute();
      await db.schema.alterTable("challenges").addColumn("attempt", "text").execute();
      await db.schema
        .alterTable("challenges")
        .addColumn("event_degraded", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  "0007_readiness_probe": {
    async up(db: Kysely<unknown>) {
      // One row that /readyz rewrites: a real write, refused by a read-only server or a standby.
      await db.schema
        .createTable("readiness_probe")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("probed_at", "bigint", (c) => c.notNull())
        .execute();
    },
  },
  "0008_console": {
    async up(db: Kysely<unknown>) {
      // What the console's calibration and what-if read: the risk an event was decided on and what
      // decided it (events written before this migration count as unscored).
      await db.schema
        .alterTable("events")
        .addColumn("decided_by", "text", (c) => c.notNull().defaultTo("model"))
        .execute();
      for (const column of ["risk_estimate", "risk_low", "risk_high"]) {
        await db.schema.alterTable("events").addColumn(column, "double precision").execute();
      }
      await db.schema
        .alterTable("events")
        .addColumn("risk_raised", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      // The console's aggregates over a million events are read in index order, so the database
      // groups while it scans instead of sorting (docs/console.md, "Performance"): decisions per hour,
      // and the risk groups that calibration and what-if replay.
      await sql`create index events_hourly on events (tenant_id, (created_at / 3600000), action, decision, actor_type, degraded, enforcement_mode, created_at)`.execute(
        db,
      );
      await db.schema
        .createIndex("events_risk")
        .on("events")
        .columns([
          "tenant_id",
          "action",
          "risk_estimate",
          "risk_low",
          "risk_high",
          "actor_type",
          "decided_by",
          "risk_raised",
          "would_be_decision",
          "created_at",
        ])
        .execute();
      await db.schema.createIndex("events_session").on("events").columns(["tenant_id", "session"]).execute();
      // Each event's effective outcomes without reading the observations themselves.
      await db.schema
        .createIndex("feedback_labels")
        .on("feedback")
        .columns(["tenant_id", "status", "event_id", "outcome"])
        .execute();
      await db.schema
        .createIndex("challenges_tenant_issued")
        .on("challenges")
        .columns(["tenant_id", "issued_at"])
        .execute();
      await db.schema
        .createIndex("challenges_tenant_event")
        .on("challenges")
        .columns(["tenant_id", "event_id"])
        .execute();
      await db.schema
        .createTable("console_sessions")
        .addColumn("id_hash", "text", (c) => c.primaryKey())
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("console_sessions_expiry")
        .on("console_sessions")
        .column("expires_at")
        .execute();
    },
  },
  "0009_one_clear_per_event": {
    async up(db: Kysely<unknown>) {
      // One redeemed clear per challenged event (its attempt), whichever of the event's challenges
      // earned it: the primary key is the rule, so it holds across processes and challenges.
      await db.schema
        .createTable("event_clears")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("challenge_id", "text", (c) => c.notNull())
        .addColumn("redeemed_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("event_clears_pk", ["tenant_id", "event_id"])
        .execute();
      // Clears redeemed before this rule: the earliest per event stands for the event.
      await sql`insert into event_clears (tenant_id, event_id, challenge_id, redeemed_at)
        select tenant_id, event_id, min(id), min(redeemed_at) from challenges
        where redeemed_at is not null group by tenant_id, event_id`.execute(db);
    },
  },
  "0010_challenge_completion_key": {
    async up(db) {
      // Which completion cleared the challenge (a hash of its Idempotency-Key and payload), written
      // by the clearing update itself: a retried completion replays instead of meeting 409.
      await db.schema.alterTable("challenges").addColumn("completion_key", "text").execute();
    },
  },
  "0012_event_search": {
    async up(db) {
      // What the console finds a person by (docs/console.md, "Finding a person"), in columns the
      // events insert writes: the signals' email hash and network, and the verdict's reason codes.
      for (const column of ["email_hash", "network", "reason_codes"]) {
        await db.schema.alterTable("events").addColumn(column, "text").execute();
      }
      // Events recorded before: their hash and network are read from their signals, once. Their
      // reasons were prose only, so they have no codes.
      const signal = (name: string) =>
        dialect === "postgres"
          ? sql`(signals::jsonb ->> ${name})`
          : sql`json_extract(signals, ${`$.${name}`})`;
      await sql`update events set email_hash = ${signal("emailSha256")}, network = ${signal("ipNetwork")}
        where signals like '%"emailSha256":"%' or signals like '%"ipNetwork":"%'`.execute(db);
      // Each leads with the tenant and ends with the time, so a search reads its events newest first
      // from the index; only events that have the value are in it.
      for (const [name, column] of [
        ["events_email", "email_hash"],
        ["events_network", "network"],
      ] as const) {
        await db.schema
          .createIndex(name)
          .on("events")
          .columns(["tenant_id", column, "created_at"])
          .where(sql.ref(column), "is not", null)
          .execute();
      }
      // Degraded events are few: the filter reads them from this index alone.
      await db.schema
        .createIndex("events_degraded")
        .on("events")
        .columns(["tenant_id", "created_at"])
        .where(sql.ref("degraded"), "=", sql.lit(1))
        .execute();
      // Reason codes have no index and no rows of their own: the console reads them from reason_codes
      // (store/sql/eventSearch.ts), so recording an event writes nothing more for them. A side table
      // filled by a trigger took half the CPU of recording an event on SQLite (docs/benchmarks.md).
    },
  },
  "0011_feedback_resolutions": {
    async up(db) {
      // Who resolved a quarantined observation, how and when: appended once, never changed. The
      // primary key makes "once" hold across processes; the observation's status changes with it.
      await db.schema
        .createTable("feedback_resolutions")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("feedback_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("resolution", "text", (c) => c.notNull())
        .addColumn("note", "text")
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("resolved_at", "bigint", (c) => c.notNull())
        .addColumn("superseded", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("feedback_resolutions_pk", ["tenant_id", "feedback_id"])
        .execute();
      await db.schema
        .createIndex("feedback_resolutions_event")
        .on("feedback_resolutions")
        .columns(["tenant_id", "event_id"])
        .execute();
    },
  },
  "0013_attempt_links": {
    async up(db) {
      // An attempt is its first verdict and the re-verify that redeemed its clear: the clear records
      // that re-verify's event, so feedback on either counts for the attempt (docs/api.md, "Attempts").
      await db.schema.alterTable("event_clears").addColumn("reverify_event_id", "text").execute();
      await db.schema
        .createIndex("event_clears_reverify")
        .on("event_clears")
        .columns(["tenant_id", "reverify_event_id"])
        .execute();
      // Clears redeemed before: the redeeming event was written at the redemption's time, decided by
      // the clear, with the challenge's id among its signals.
      const challengeIdOf =
        dialect === "postgres"
          ? sql`(e.signals::jsonb ->> 'challengeId')`
          : sql`json_extract(e.signals, '$.challengeId')`;
      await sql`update event_clears set reverify_event_id = (
          select e.id from events e
          where e.tenant_id = event_clears.tenant_id and e.created_at = event_clears.redeemed_at
            and e.decided_by = 'clear' and ${challengeIdOf} = event_clears.challenge_id
          limit 1)`.execute(db);
    },
  },
  "0014_idempotency_event": {
    async up(db) {
      // The event an idempotent answer replays (verify's verdict, feedback's acknowledgement), so
      // that removing an event (retention, erasure: store/sql/eventRemoval.ts) removes the answers
      // that would replay it, found through the index rather than by reading every stored answer.
      await db.schema.alterTable("idempotency").addColumn("event_id", "text").execute();
      const eventIdOf =
        dialect === "postgres" ? sql`(body::jsonb ->> 'eventId')` : sql`json_extract(body, '$.eventId')`;
      await sql`update idempotency set event_id = ${eventIdOf}
        where operation in ('verify', 'feedback') and body like '%"eventId":"%'`.execute(db);
      await db.schema
        .createIndex("idempotency_event")
        .on("idempotency")
        .columns(["tenant_id", "event_id"])
        .where(sql.ref("event_id"), "is not", null)
        .execute();
    },
  },
  "0015_event_partitions": {
    async up(db) {
      // PostgreSQL: events in weekly partitions, so that retention drops a week at once
      // (postgres/eventPartitions.ts). SQLite has no partitions; it keeps one table.
      if (dialect === "postgres") await partitionEventsTable(db, Date.now());
    },
  },
  "0016_schema_compatibility": {
    async up(db) {
      // The oldest build that may still serve from this schema (schemaCompatibility.ts): every
      // release since 0015 writes what the previous one reads, so its floor is 0015.
      await db.schema
        .createTable(COMPATIBILITY_TABLE)
        .ifNotExists()
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("oldest_build_knows", "text", (c) => c.notNull())
        .execute();
      await sql`insert into ${sql.table(COMPATIBILITY_TABLE)} (id, oldest_build_knows)
        values (1, '0015_event_partitions') on conflict (id) do nothing`.execute(db);
    },
  },
  "0017_partitions_for_runtime_role": {
    async up(db) {
      // PostgreSQL: the coming weeks' partitions made by a role without DDL rights, through a
      // function the owner defines (postgres/eventPartitions.ts, createPartitionsFunction).
      if (dialect === "postgres") await createPartitionsFunction(db);
    },
  },
  "0018_erasures": {
    async up(db) {
      // What an erasure removed, remembered for ERASURE_MEMORY_MS (store/sql/eventRemoval.ts), so a
      // degraded event of its subject written late is not written. An older build ignores the table.
      // Run again over what it made (a test taking the schema back to an earlier migration), it keeps it.
      await db.schema
        .createTable("erasures")
        .ifNotExists()
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("value", "text", (c) => c.notNull())
        .addColumn("erased_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("erasures_subject")
        .ifNotExists()
        .on("erasures")
        .columns(["tenant_id", "value"])
        .execute();
    },
  },
});

/** Every migration this version knows, in order (the schema it needs is the last one's). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrationsFor("sqlite")).sort();

/**
 * The Migrator of Warden's migrations. Kysely looks for its migration tables by name in every
 * schema: another schema's (another Kysely application in the same database, or another Warden's)
 * would pass for Warden's own, and its lock would then be missing where the connection works. So the
 * schema the connection writes to is named.
 */
async function migratorFor(db: Kysely<unknown>, dialect: Dialect): Promise<Migrator> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(dialect) };
  const schema =
    dialect === "postgres"
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  return new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
}

/** A database whose schema this version cannot serve from: `warden migrate` has not run on it. */
export class SchemaBehindError extends Error {}
export { SchemaAheadError };

/**
 * Checks, changing nothing, that every migration has run (`warden serve --no-migrate`, whose role
 * may lack the right to change the schema) and that this build may serve from the schema: throws
 * SchemaBehindError naming the missing migrations, or SchemaAheadError (schemaCompatibility.ts).
 */
export async function requireCurrentSchema(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await requireMigrationsRun(db, dialect);
  await requireServableSchema(db, MIGRATION_NAMES);
}

async function requireMigrationsRun(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const migrations = await (await migratorFor(db, dialect)).getMigrations();
  const missing = migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
  if (missing.length > 0) {
    throw new SchemaBehindError(
      `the database schema lacks ${missing.length} migration(s) (${missing.join(", ")}): run \`warden migrate\` with a role that may change the schema, then start again`,
    );
  }
}

/** Runs the migrations up to and including `name` (a test of an upgrade starts from an older schema). */
export async function migrateUpTo(db: Kysely<unknown>, dialect: Dialect, name: string): Promise<void> {
  const { error } = await (await migratorFor(db, dialect)).migrateTo(name);
  if (error) throw error;
}

/**
 * Brings the schema up to date. Safe when several processes start at once (Kysely's migration lock).
 * A schema a newer release has migrated is left as it is: this build serves from it if the schema
 * allows (a rollback, or an older process while the new release rolls out), else SchemaAheadError.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if ((await unknownExecutedMigrations(db, MIGRATION_NAMES)).length > 0) {
    await requireCurrentSchema(db, dialect);
    return;
  }
  const { error, results } = await (await migratorFor(db, dialect)).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  await requireServableSchema(db, MIGRATION_NAMES);
}
