import type { CompiledQuery, Kysely, QueryResult, Transaction } from "kysely";
import type {
  ApiKeyRecord,
  CounterHit,
  CounterReading,
  EventRecord,
  IdempotentResponse,
  RecordOutcome,
  Scope,
  SigningKeyRecord,
  Store,
  Tenant,
} from "./interfaces.js";
import { StoreUnavailableError } from "./interfaces.js";
import { precompile } from "./precompiled.js";
import type { Database } from "./schema.js";

/**
 * The queries every SQL adapter shares. An adapter supplies how a write transaction starts (SQLite
 * takes the write lock up front with BEGIN IMMEDIATE; PostgreSQL relies on row locks and unique
 * constraints) and how its connection is closed. Everything here is one statement or one transaction.
 */
export interface SqlRuntime {
  readonly db: Kysely<Database>;
  /** Runs `fn` in one write transaction: committed when it resolves, rolled back when it throws. */
  writeTransaction<T>(fn: (trx: Kysely<Database> | Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs write statements that are each atomic on their own (no all-or-nothing across them); resolves
   * once they are durable. SQLite batches these into group commits.
   */
  write<T>(fn: (conn: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * Executes a precompiled hot-path statement on `conn` (`db`, or the connection a write job was
   * given). An adapter may run it more directly than Kysely's executor would.
   */
  execute<R>(conn: Kysely<Database>, query: CompiledQuery<R>): Promise<QueryResult<R>>;
  close(): Promise<void>;
}

const bool = (v: boolean): number => (v ? 1 : 0);
/** Integer columns may come back as strings (PostgreSQL bigint); null stays null. */
const nullableNumber = (v: number | string | null): number | null => (v === null ? null : Number(v));

function tenantFromRow(row: Database["tenants"]): Tenant {
  return {
    id: row.id,
    rawPii: row.raw_pii === 1,
    logOnly: row.log_only === 1,
    createdAt: Number(row.created_at),
  };
}

function keyFromRow(row: Database["api_keys"]): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    scopes: row.scopes.split(",").filter(Boolean) as Scope[],
    logOnly: row.log_only === 1,
    createdAt: Number(row.created_at),
    revokedAt: nullableNumber(row.revoked_at),
  };
}

function signingKeyFromRow(row: Database["signing_keys"]): SigningKeyRecord {
  return {
    kid: row.kid,
    privateJwk: row.private_jwk,
    publicJwk: row.public_jwk,
    createdAt: Number(row.created_at),
    retiredAt: nullableNumber(row.retired_at),
    publishUntil: nullableNumber(row.publish_until),
  };
}

function eventToRow(e: EventRecord): Database["events"] {
  return {
    id: e.id,
    tenant_id: e.tenantId,
    key_id: e.keyId,
    created_at: e.createdAt,
    action: e.action,
    surface: e.surface,
    session: e.session,
    decision: e.decision,
    would_be_decision: e.wouldBeDecision,
    actor_type: e.actorType,
    confidence: e.confidence,
    reasons: JSON.stringify(e.reasons),
    degraded: bool(e.degraded),
    enforcement_mode: e.enforcementMode,
    costs: JSON.stringify(e.costs),
    signals: JSON.stringify(e.signals),
    engine_version: e.engineVersion,
    policy_version: e.policyVersion,
  };
}

function eventFromRow(r: Database["events"]): EventRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    keyId: r.key_id,
    createdAt: Number(r.created_at),
    action: r.action,
    surface: r.surface,
    session: r.session,
    decision: r.decision as EventRecord["decision"],
    wouldBeDecision: r.would_be_decision as EventRecord["decision"],
    actorType: r.actor_type as EventRecord["actorType"],
    confidence: Number(r.confidence),
    reasons: JSON.parse(r.reasons) as string[],
    degraded: r.degraded === 1,
    enforcementMode: r.enforcement_mode as EventRecord["enforcementMode"],
    costs: JSON.parse(r.costs) as EventRecord["costs"],
    signals: JSON.parse(r.signals) as Record<string, unknown>,
    engineVersion: r.engine_version,
    policyVersion: r.policy_version,
  };
}

/** Any failure of the database becomes StoreUnavailableError; callers never see driver errors. */
async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw err;
    if (err instanceof Error && err.name === "AbortError") throw err;
    throw new StoreUnavailableError(`${what}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}

function abortError(): Error {
  const err = new Error("aborted before commit");
  err.name = "AbortError";
  return err;
}

type KeyWithTenantRow = Database["api_keys"] & {
  t_raw_pii: number;
  t_log_only: number;
  t_created_at: number;
};

/** The verify hot path's fixed-shape statements, compiled once (see precompiled.ts). */
function hotStatements(db: Kysely<Database>) {
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

export function createSqlStore(rt: SqlRuntime): Store {
  const { db } = rt;
  const hot = hotStatements(db);
  return {
    tenants: {
      create: (t) =>
        guard("tenants.create", async () => {
          const res = await db
            .insertInto("tenants")
            .values({ id: t.id, raw_pii: bool(t.rawPii), log_only: bool(t.logOnly), created_at: t.createdAt })
            .onConflict((oc) => oc.column("id").doNothing())
            .executeTakeFirst();
          return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
        }),
      get: (id) =>
        guard("tenants.get", async () => {
          const row = await db.selectFrom("tenants").selectAll().where("id", "=", id).executeTakeFirst();
          return row ? tenantFromRow(row) : undefined;
        }),
      list: () =>
        guard("tenants.list", async () =>
          (await db.selectFrom("tenants").selectAll().orderBy("id").execute()).map(tenantFromRow),
        ),
      count: () =>
        guard("tenants.count", async () => {
          const row = await db
            .selectFrom("tenants")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow();
          return Number(row.n);
        }),
    },

    apiKeys: {
      create: (k, keyHash) =>
        guard("apiKeys.create", async () => {
          await db
            .insertInto("api_keys")
            .values({
              id: k.id,
              tenant_id: k.tenantId,
              key_hash: keyHash,
              scopes: k.scopes.join(","),
              log_only: bool(k.logOnly),
              created_at: k.createdAt,
              revoked_at: k.revokedAt,
            })
            .execute();
        }),
      findByHash: (keyHash) =>
        guard("apiKeys.findByHash", async () => {
          const { rows } = await rt.execute(db, hot.findKey({ keyHash }));
          const row = rows[0] as KeyWithTenantRow | undefined;
          if (!row) return undefined;
          return {
            key: keyFromRow(row),
            tenant: tenantFromRow({
              id: row.tenant_id,
              raw_pii: row.t_raw_pii,
              log_only: row.t_log_only,
              created_at: row.t_created_at,
            }),
          };
        }),
      list: (tenantId) =>
        guard("apiKeys.list", async () =>
          (
            await db
              .selectFrom("api_keys")
              .selectAll()
              .where("tenant_id", "=", tenantId)
              .orderBy("created_at")
              .orderBy("id")
              .execute()
          ).map(keyFromRow),
        ),
      revoke: (keyId, at) =>
        guard("apiKeys.revoke", async () => {
          const res = await db
            .updateTable("api_keys")
            .set({ revoked_at: at })
            .where("id", "=", keyId)
            .where("revoked_at", "is", null)
            .executeTakeFirst();
          return Number(res.numUpdatedRows) === 1;
        }),
    },

    signingKeys: {
      listPublished: (now) =>
        guard("signingKeys.listPublished", async () =>
          (
            await db
              .selectFrom("signing_keys")
              .selectAll()
              .where((eb) => eb.or([eb("retired_at", "is", null), eb("publish_until", ">", now)]))
              .orderBy("created_at", "desc")
              .orderBy("kid", "desc")
              .execute()
          ).map(signingKeyFromRow),
        ),
      rotate: (next, keepPublishedMs) =>
        guard("signingKeys.rotate", () =>
          rt.writeTransaction(async (trx) => {
            await trx
              .updateTable("signing_keys")
              .set({ retired_at: next.createdAt, publish_until: next.createdAt + keepPublishedMs })
              .where("retired_at", "is", null)
              .execute();
            await trx.insertInto("signing_keys").values(signingKeyToRow(next)).execute();
          }),
        ),
      insertIfNone: (first) =>
        guard("signingKeys.insertIfNone", () =>
          rt.writeTransaction(async (trx) => {
            const active = await trx
              .selectFrom("signing_keys")
              .select("kid")
              .where("retired_at", "is", null)
              .executeTakeFirst();
            if (active) return false;
            await trx.insertInto("signing_keys").values(signingKeyToRow(first)).execute();
            return true;
          }),
        ),
    },

    counters: {
      hit: (hits, now) =>
        guard("counters.hit", () =>
          rt.write(async (conn) => {
            const readings: CounterReading[] = [];
            for (const h of hits) readings.push(await hitOne(rt, conn, hot.hitCounter, h, now));
            return readings;
          }),
        ),
      purgeExpired: (now) =>
        guard("counters.purgeExpired", async () => {
          const res = await db.deleteFrom("counters").where("expires_at", "<=", now).executeTakeFirst();
          return Number(res.numDeletedRows);
        }),
    },

    events: {
      record: (event, idem, signal) =>
        guard("events.record", async (): Promise<RecordOutcome> => {
          if (!idem) {
            // One statement is atomic on its own; no transaction needed.
            return rt.write(async (conn) => {
              if (signal?.aborted) throw abortError();
              await rt.execute(conn, hot.insertEvent(eventToRow(event)));
              return { kind: "recorded" } as const;
            });
          }
          return rt.writeTransaction(async (trx): Promise<RecordOutcome> => {
            // One statement claims the key: insert, or take over a row whose retention has passed.
            const claimed = await trx
              .insertInto("idempotency")
              .values({
                tenant_id: idem.tenantId,
                operation: idem.operation,
                key: idem.key,
                fingerprint: idem.response.fingerprint,
                status_code: idem.response.statusCode,
                body: JSON.stringify(idem.response.body),
                created_at: event.createdAt,
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
                  .where("idempotency.expires_at", "<=", event.createdAt),
              )
              .returning("key")
              .executeTakeFirst();
            if (!claimed) {
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
            await rt.execute(trx, hot.insertEvent(eventToRow(event)));
            if (signal?.aborted) throw abortError();
            return { kind: "recorded" };
          });
        }),
      get: (tenantId, eventId) =>
        guard("events.get", async () => {
          const row = await db
            .selectFrom("events")
            .selectAll()
            .where("id", "=", eventId)
            .where("tenant_id", "=", tenantId)
            .executeTakeFirst();
          return row ? eventFromRow(row) : undefined;
        }),
    },

    idempotency: {
      find: (key, now) =>
        guard("idempotency.find", async () => {
          const row = await db
            .selectFrom("idempotency")
            .select(["fingerprint", "status_code", "body"])
            .where("tenant_id", "=", key.tenantId)
            .where("operation", "=", key.operation)
            .where("key", "=", key.key)
            .where("expires_at", ">", now)
            .executeTakeFirst();
          return row ? responseFromRow(row) : undefined;
        }),
      purgeExpired: (now) =>
        guard("idempotency.purgeExpired", async () => {
          const res = await db.deleteFrom("idempotency").where("expires_at", "<=", now).executeTakeFirst();
          return Number(res.numDeletedRows);
        }),
    },

    ping: () =>
      guard("ping", async () => {
        await db.selectFrom("tenants").select("id").limit(1).execute();
      }),
    close: () => rt.close(),
  };
}

function signingKeyToRow(k: SigningKeyRecord): Database["signing_keys"] {
  return {
    kid: k.kid,
    private_jwk: k.privateJwk,
    public_jwk: k.publicJwk,
    created_at: k.createdAt,
    retired_at: k.retiredAt,
    publish_until: k.publishUntil,
  };
}

function responseFromRow(row: {
  fingerprint: string;
  status_code: number;
  body: string;
}): IdempotentResponse {
  return { fingerprint: row.fingerprint, statusCode: Number(row.status_code), body: JSON.parse(row.body) };
}

async function hitOne(
  rt: SqlRuntime,
  db: Kysely<Database>,
  statement: ReturnType<typeof hotStatements>["hitCounter"],
  h: CounterHit,
  now: number,
): Promise<CounterReading> {
  const bucket = Math.floor(now / h.windowMs);
  // The width is part of the row's name, so one name can be counted over several windows.
  const name = `${h.name}|${h.windowMs}`;
  // A bucket's row lives until the end of the next bucket, the last moment it is read as "previous".
  const { rows } = await rt.execute(
    db,
    statement({ name, expiresAt: (bucket + 2) * h.windowMs, previousExpiresAt: (bucket + 1) * h.windowMs }),
  );
  const row = rows[0] as { count: number; previous: number | null };
  return {
    current: Number(row.count),
    previous: row.previous === null ? 0 : Number(row.previous),
    elapsed: (now - bucket * h.windowMs) / h.windowMs,
  };
}
