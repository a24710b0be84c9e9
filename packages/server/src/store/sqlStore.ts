import type { CompiledQuery, Kysely, QueryResult, Transaction } from "kysely";
import type {
  ApiKeyRecord,
  AppendOutcome,
  ChallengeMethod,
  ChallengeRecord,
  CounterHit,
  CounterReading,
  EventRecord,
  IdempotencyKey,
  IdempotentResponse,
  LedgerFilter,
  LedgerRow,
  Observation,
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

function tenantFromRow(row: Omit<Database["tenants"], "payment_secret_key">): Tenant {
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

function observationFromRow(r: Database["feedback"]): Observation {
  return {
    feedbackId: r.feedback_id,
    tenantId: r.tenant_id,
    eventId: r.event_id,
    outcome: r.outcome,
    value: r.value === null ? null : Number(r.value),
    unit: r.unit,
    source: r.source,
    observedAt: Number(r.observed_at),
    receivedAt: Number(r.received_at),
    identity: r.identity,
    status: r.status as Observation["status"],
    conflictsWith: r.conflicts_with,
  };
}

function challengeFromRow(r: Database["challenges"]): ChallengeRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    eventId: r.event_id,
    session: r.session,
    method: r.method as ChallengeMethod,
    difficulty: r.difficulty === null ? null : Number(r.difficulty),
    seed: r.seed,
    instructions: JSON.parse(r.instructions) as Record<string, unknown>,
    issuedAt: Number(r.issued_at),
    expiresAt: Number(r.expires_at),
    clearedAt: nullableNumber(r.cleared_at),
    redeemedAt: nullableNumber(r.redeemed_at),
    proofRef: r.proof_ref,
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
          const row = await db
            .selectFrom("tenants")
            .select(["id", "raw_pii", "log_only", "created_at"])
            .where("id", "=", id)
            .executeTakeFirst();
          return row ? tenantFromRow(row) : undefined;
        }),
      list: () =>
        guard("tenants.list", async () =>
          (
            await db
              .selectFrom("tenants")
              .select(["id", "raw_pii", "log_only", "created_at"])
              .orderBy("id")
              .execute()
          ).map(tenantFromRow),
        ),
      setPaymentKey: (id, secretKey) =>
        guard("tenants.setPaymentKey", async () => {
          const res = await db
            .updateTable("tenants")
            .set({ payment_secret_key: secretKey })
            .where("id", "=", id)
            .executeTakeFirst();
          return Number(res.numUpdatedRows) === 1;
        }),
      paymentKey: (id) =>
        guard("tenants.paymentKey", async () => {
          const row = await db
            .selectFrom("tenants")
            .select("payment_secret_key")
            .where("id", "=", id)
            .executeTakeFirst();
          return row?.payment_secret_key ?? undefined;
        }),
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
            const claim = await claimIdempotencyKey(trx, idem, event.createdAt);
            if (claim) return claim;
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

    feedback: {
      append: (obs, conflictingOutcomes, idem) =>
        guard("feedback.append", () =>
          // One write transaction; SQLite's BEGIN IMMEDIATE serializes it with every other writer, so
          // the quarantine decision below sees every observation accepted before it.
          rt.writeTransaction(async (trx): Promise<AppendOutcome> => {
            if (idem) {
              const claim = await claimIdempotencyKey(trx, idem, obs.receivedAt);
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
          const rows = await ledgerScope(db, tenantId, filter)
            .select((eb) => [
              "f.outcome",
              "f.unit",
              "f.status",
              eb.fn.countAll<number>().as("count"),
              eb.fn.coalesce(eb.fn.sum<number>("f.value"), eb.lit(0)).as("total"),
            ])
            .groupBy(["f.outcome", "f.unit", "f.status"])
            .execute();
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
      quarantined: (tenantId, filter, limit) =>
        guard("feedback.quarantined", async () => {
          const rows = await ledgerScope(db, tenantId, filter)
            .selectAll("f")
            .where("f.status", "=", "quarantined")
            .orderBy("f.received_at", "desc")
            .orderBy("f.feedback_id", "desc")
            .limit(limit)
            .execute();
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
    },

    challenges: {
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
    },

    ping: () =>
      guard("ping", async () => {
        await db.selectFrom("tenants").select("id").limit(1).execute();
      }),
    close: () => rt.close(),
  };
}

type IdempotencyClaim = IdempotencyKey & { response: IdempotentResponse; expiresAt: number };

/**
 * Claims an idempotency key inside the caller's transaction: inserts it, or takes over a row whose
 * retention has passed. Undefined when claimed; otherwise the replay or conflict outcome.
 */
async function claimIdempotencyKey(
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
