import type { Kysely } from "kysely";
import type {
  ClearRedemption,
  CounterHit,
  CounterReading,
  EventRecord,
  RecordOutcome,
  Store,
} from "./interfaces.js";
import type { Database } from "./schema.js";
import { createAgentStore, createPolicyStore } from "./sql/agentAndPolicyStores.js";
import { createChallengeStore } from "./sql/challengeStore.js";
import { createFeedbackStore } from "./sql/feedbackStore.js";
import { hotStatements, type KeyWithTenantRow } from "./sql/hotStatements.js";
import { claimIdempotencyKey, readIdempotentResponse } from "./sql/idempotencyClaim.js";
import { deleteExpiredCounters, deleteExpiredIdempotency, purgeInChunks } from "./sql/purge.js";
import {
  abortError,
  bool,
  eventFromRow,
  eventToRow,
  guard,
  keyFromRow,
  signingKeyFromRow,
  signingKeyToRow,
  tenantFromRow,
} from "./sql/rows.js";
import type { SqlRuntime } from "./sql/runtime.js";
import {
  type CounterBucket,
  hitCountersInOneStatement,
  verifyWriteBatches,
} from "./sql/verifyWriteBatches.js";

export type { SqlRuntime } from "./sql/runtime.js";

/**
 * The store on SQL, shared by every SQL adapter: each area is one statement or one transaction.
 * An adapter supplies the runtime (how write transactions start, how hot statements run).
 */
export function createSqlStore(rt: SqlRuntime): Store {
  const { db } = rt;
  const hot = hotStatements(db);
  const batches = rt.batchesInFlight && verifyWriteBatches(rt, hot, rt.batchesInFlight);
  /** Whether the key exists unrevoked, read on `conn` (inside a write when one is open). */
  const keyActive = async (conn: Kysely<Database>, keyId: string) =>
    (await rt.execute(conn, hot.keyIsActive({ keyId }))).rows.length > 0;
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
      isActive: (keyId) => guard("apiKeys.isActive", () => keyActive(db, keyId)),
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
            await rt.serialize(trx, "signing-keys");
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
            await rt.serialize(trx, "signing-keys");
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
        // Nothing to count is not a write (no group-commit job, no transaction).
        hits.length === 0
          ? Promise.resolve([])
          : guard("counters.hit", () =>
              // Early: the event the caller writes next shares the commit (counters' semantics in
              // interfaces.ts).
              batches
                ? hitCounters(hits, now, (buckets) => batches.hitCounters(buckets))
                : rt.write(
                    (conn) =>
                      hitCounters(hits, now, (buckets) => hitCountersInOneStatement(rt, conn, hot, buckets)),
                    { early: true },
                  ),
            ),
      purgeExpired: (now) =>
        guard("counters.purgeExpired", () =>
          purgeInChunks(rt, (conn, limit) => deleteExpiredCounters(conn, now, limit)),
        ),
    },

    events: {
      record: (event, idem, signal, options) =>
        guard("events.record", async (): Promise<RecordOutcome> => {
          const activeKey = options?.activeKey === true;
          const redeem = options?.redeem;
          if (!idem && !redeem && activeKey && batches) {
            if (await batches.insertEventIfKeyActive(eventToRow(event), signal)) return { kind: "recorded" };
            // Nothing written: a retry of an event already stored, or a revoked key.
            return (await keyActive(db, event.keyId)) ? { kind: "recorded" } : { kind: "key_revoked" };
          }
          if (!idem && !redeem) {
            // One statement is atomic on its own; no transaction needed.
            return rt.write(async (conn): Promise<RecordOutcome> => {
              // The statement commits on its own (PostgreSQL) or with the batch it joins (SQLite).
              if (signal && !signal.commit()) throw abortError();
              const row = eventToRow(event);
              if (!activeKey) {
                await rt.execute(conn, hot.insertEvent(row));
                return { kind: "recorded" };
              }
              const res = await rt.execute(conn, hot.insertEventIfKeyActive(row));
              if (Number(res.numAffectedRows ?? 0) === 1) return { kind: "recorded" };
              // Nothing written: a retry of an event already stored, or a revoked key.
              return (await keyActive(conn, event.keyId)) ? { kind: "recorded" } : { kind: "key_revoked" };
            });
          }
          if (idem && activeKey && !redeem && rt.claimsInOneStatement) {
            // One round trip instead of a five-statement transaction (hotStatements.ts).
            return rt.write(async (conn): Promise<RecordOutcome> => {
              if (signal && !signal.commit()) throw abortError();
              const res = await rt.execute(
                conn,
                hot.claimAndInsertEvent({
                  ...eventToRow(event),
                  i_operation: idem.operation,
                  i_key: idem.key,
                  i_fingerprint: idem.response.fingerprint,
                  i_status_code: idem.response.statusCode,
                  i_body: JSON.stringify(idem.response.body),
                  i_expires_at: idem.expiresAt,
                }),
              );
              if (Number(res.numAffectedRows ?? 0) === 1) return { kind: "recorded" };
              if (!(await keyActive(conn, event.keyId))) return { kind: "key_revoked" };
              const held = await readIdempotentResponse(conn, idem, event.createdAt);
              if (!held) throw new Error("idempotency key neither claimed nor held");
              if (held.fingerprint !== idem.response.fingerprint) return { kind: "conflict" };
              return { kind: "replay", response: held };
            });
          }
          try {
            return await rt.writeTransaction(async (trx): Promise<RecordOutcome> => {
              if (activeKey && !(await keyActive(trx, event.keyId))) return { kind: "key_revoked" };
              if (idem) {
                const claim = await claimIdempotencyKey(trx, idem, event.createdAt);
                if (claim) return claim;
              }
              // After the claim, so that a replay or conflict never spends the clear; a failed
              // redemption throws to roll the claim back.
              if (redeem && !(await redeemClear(trx, event, redeem))) throw new NotRedeemed();
              await rt.execute(trx, hot.insertEvent(eventToRow(event)));
              // Resolving commits the transaction.
              if (signal && !signal.commit()) throw abortError();
              return { kind: "recorded" };
            });
          } catch (err) {
            if (err instanceof NotRedeemed) return { kind: "not_redeemed" };
            throw err;
          }
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
      find: (key, now) => guard("idempotency.find", () => readIdempotentResponse(db, key, now)),
      purgeExpired: (now) =>
        guard("idempotency.purgeExpired", () =>
          purgeInChunks(rt, (conn, limit) => deleteExpiredIdempotency(conn, now, limit)),
        ),
    },
    feedback: createFeedbackStore(rt),
    challenges: createChallengeStore(rt),
    agents: createAgentStore(rt),
    policies: createPolicyStore(rt),

    ping: () =>
      guard("ping", async () => {
        await rt.write((conn) => rt.execute(conn, rt.writeProbe));
      }),
    // Each connection held at once (a pool with no idle connection opens one for each) reads every
    // table verify touches, finding nothing: PostgreSQL loads a table's catalog entries into a new
    // connection's backend on its first use, which costs that connection's first verify milliseconds.
    warmUp: () =>
      guard("warmUp", async () => {
        await Promise.all(
          Array.from({ length: Math.max(1, rt.warmConnections) }, () =>
            db.connection().execute(async (conn) => {
              await rt.execute(conn, hot.findKey({ keyHash: "" }));
              await rt.execute(conn, hot.keyIsActive({ keyId: "" }));
              await readIdempotentResponse(conn, { tenantId: "", operation: "verify", key: "" }, 0);
              await conn
                .selectFrom("tenant_policies")
                .select("version")
                .where("tenant_id", "=", "")
                .execute();
              await conn.selectFrom("events").select("id").where("id", "=", "").execute();
              await conn
                .selectFrom("counters")
                .select("count")
                .where("name", "=", "")
                .where("expires_at", "=", 0)
                .execute();
            }),
          ),
        );
        // Counters may run on connections of their own (`early` writes, runtime.ts): open those too.
        await Promise.all(
          Array.from({ length: Math.max(1, rt.warmConnections) }, () =>
            rt.write((conn) => rt.execute(conn, hot.readCounter({ name: "" })), { early: true }),
          ),
        );
      }),
    close: () => rt.close(),
  };
}

/** Thrown inside events.record's transaction to roll it back when the clear cannot be redeemed. */
class NotRedeemed extends Error {}

/** One conditional UPDATE: every condition of a redemption and the change, in one statement. */
async function redeemClear(trx: Kysely<Database>, event: EventRecord, r: ClearRedemption): Promise<boolean> {
  const res = await trx
    .updateTable("challenges")
    .set({ redeemed_at: event.createdAt })
    .where("tenant_id", "=", event.tenantId)
    .where("id", "=", r.challengeId)
    .where("session", "=", r.session)
    .where("attempt", "=", r.attempt)
    .where("cleared_at", ">=", r.clearedSince)
    .where("redeemed_at", "is", null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * All of a request's counters, counted at once. A counter's row is named with its window width, so
 * one name can be counted over several windows; a bucket's row lives until the end of the next
 * bucket, the last moment it is read as "previous".
 */
async function hitCounters(
  hits: readonly CounterHit[],
  now: number,
  count: (buckets: CounterBucket[]) => Promise<{ count: number; previous: number | null }[]>,
): Promise<CounterReading[]> {
  const buckets = hits.map((h): CounterBucket => {
    const bucket = Math.floor(now / h.windowMs);
    return {
      name: `${h.name}|${h.windowMs}`,
      expiresAt: (bucket + 2) * h.windowMs,
      previousExpiresAt: (bucket + 1) * h.windowMs,
    };
  });
  if (new Set(buckets.map((b) => b.name)).size !== buckets.length)
    throw new Error("counters.hit: the same counter twice");
  const counts = await count(buckets);
  return hits.map((h, i) => {
    const c = counts[i];
    if (!c) throw new Error("counters.hit: a counter was not returned");
    return {
      current: c.count,
      previous: c.previous ?? 0,
      elapsed: (now - Math.floor(now / h.windowMs) * h.windowMs) / h.windowMs,
    };
  });
}
