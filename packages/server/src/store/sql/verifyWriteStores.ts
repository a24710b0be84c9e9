import type { Kysely } from "kysely";
import type { EventRecord } from "../../domain.js";
import {
  type ClearRedemption,
  type CounterStore,
  type ErasedKind,
  type EventStore,
  erasedDigest,
  type IdempotencyStore,
  type RecordOutcome,
} from "../interfaces.js";
import type { Database } from "../schema.js";
import { hitCounters, hitCountersInOneStatement } from "./counterBuckets.js";
import type { hotStatements } from "./hotStatements.js";
import { claimIdempotencyKey, readIdempotentResponse } from "./idempotencyClaim.js";
import { deleteExpiredCounters, deleteExpiredIdempotency, purgeInChunks } from "./purge.js";
import { abortError, eventFromRow, eventToRow, guard } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";
import { keyActive as keyIsActive } from "./tenantAndKeyStores.js";
import type { VerifyWriteBatches } from "./verifyWriteBatches.js";

type Hot = ReturnType<typeof hotStatements>;

/*
 * Verify's writes on SQL: counters, events (with the idempotency claim and a clear's redemption in
 * the same atomic call) and the idempotency keys' read side. `batches` when the runtime batches
 * verify's writes (PostgreSQL, verifyWriteBatches.ts).
 */

/** Counters: all of a request's hits in one statement, or in its batch's. */
export function createCounterStore(
  rt: SqlRuntime,
  hot: Hot,
  batches: VerifyWriteBatches | undefined,
): CounterStore {
  return {
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
  };
}

/**
 * Events: one conditional statement, or one transaction with the claim and the redemption. Reading
 * one event back is for the routes off verify's path (challenge, feedback, the console): on `patient`.
 */
export function createEventStore(
  rt: SqlRuntime,
  hot: Hot,
  batches: VerifyWriteBatches | undefined,
  patient: SqlRuntime = rt,
): EventStore {
  const { db } = rt;
  const keyActive = (conn: Kysely<Database>, keyId: string) => keyIsActive(rt, hot, conn, keyId);
  /** The event's row, once the write is settled (a fresh read: `db` is any connection). */
  const written = (event: EventRecord) =>
    db
      .selectFrom("events")
      .select("id")
      .where("tenant_id", "=", event.tenantId)
      .where("id", "=", event.id)
      .compile();
  const record: EventStore["record"] = (event, idem, signal, options) =>
    guard("events.record", async (): Promise<RecordOutcome> => {
      const activeKey = options?.activeKey === true;
      const redeem = options?.redeem;
      // A degraded event's id may be keyed and carry no time (hotStatements.ts, firstOfItsId): its
      // write takes the transaction below, which first waits for any other write of the same id.
      const degraded = event.degraded;
      if (!idem && !redeem && activeKey && batches && !degraded) {
        if (await batches.insertEventIfKeyActive(eventToRow(event), signal)) return { kind: "recorded" };
        // Nothing written: a retry of an event already stored, or a revoked key.
        return (await keyActive(db, event.keyId)) ? { kind: "recorded" } : { kind: "key_revoked" };
      }
      if (!idem && !redeem && !degraded) {
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
      if (idem && activeKey && !redeem && rt.claimsInOneStatement && !degraded) {
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
          if (degraded) {
            await rt.serialize(trx, `event-id\n${event.id}`);
            if (await erasedSince(rt, trx, event)) throw new Erased();
          }
          if (activeKey && !(await keyActive(trx, event.keyId))) return { kind: "key_revoked" };
          if (idem) {
            const claim = await claimIdempotencyKey(trx, idem, event.createdAt, event.id);
            if (claim) return claim;
          }
          // After the claim, so that a replay or conflict never spends the clear; a failed
          // redemption throws to roll the claim back.
          if (redeem && !(await redeemClear(rt, trx, event, redeem))) throw new NotRedeemed();
          await rt.execute(trx, hot.insertEvent(eventToRow(event)));
          // Resolving commits the transaction.
          if (signal && !signal.commit()) throw abortError();
          return { kind: "recorded" };
        });
      } catch (err) {
        if (err instanceof NotRedeemed) return { kind: "not_redeemed" };
        if (err instanceof Erased) return { kind: "erased" };
        throw err;
      }
    });
  return {
    record: async (event, idem, signal, options) => {
      try {
        return await record(event, idem, signal, options);
      } catch (err) {
        // A write whose connection gave up on it may have committed all the same (reuseGuard.ts):
        // what the database kept is the outcome, so that no degraded answer stands beside a
        // committed event, idempotent answer or spent clear.
        if (await rt.keptDespite(err, written(event))) return { kind: "recorded" };
        throw err;
      }
    },
    get: (tenantId, eventId) =>
      guard("events.get", async () => {
        const row = await patient.db
          .selectFrom("events")
          .selectAll()
          .where("id", "=", eventId)
          .where("tenant_id", "=", tenantId)
          .executeTakeFirst();
        return row ? eventFromRow(row) : undefined;
      }),
  };
}

/** Idempotency keys' read side (replays) and their purge; claims are part of events.record. */
export function createIdempotencyStore(rt: SqlRuntime): IdempotencyStore {
  const { db } = rt;
  return {
    find: (key, now) => guard("idempotency.find", () => readIdempotentResponse(db, key, now)),
    purgeExpired: (now) =>
      guard("idempotency.purgeExpired", () =>
        purgeInChunks(rt, (conn, limit) => deleteExpiredIdempotency(conn, now, limit)),
      ),
  };
}

/** Thrown inside events.record's transaction to roll it back when a degraded event's subject was erased. */
class Erased extends Error {}

/**
 * Whether an erasure named this degraded event's email hash, network, session or id after the event
 * was created. Taken under the tenant's erasure lock, which the erasure holds while it writes its
 * row (eventRemoval.ts), so the two are serialized.
 */
async function erasedSince(rt: SqlRuntime, trx: Kysely<Database>, event: EventRecord): Promise<boolean> {
  await rt.serialize(trx, `erasure\n${event.tenantId}`);
  // The table keeps digests of what was erased (EventRemovalStore.erase): this event's values are
  // digested alike; a digest names its kind, so a session equal to some erased email hash is no match.
  const named = (
    [
      ["event", event.id],
      ["session", event.session],
      ["email_hash", event.emailHash],
      ["network", event.network],
    ] as const
  )
    .filter((n): n is readonly [ErasedKind, string] => typeof n[1] === "string" && n[1] !== "")
    .map(([kind, value]) => erasedDigest(kind, value));
  const row = await trx
    .selectFrom("erasures")
    .select("kind")
    .where("tenant_id", "=", event.tenantId)
    .where("value", "in", named)
    .where("erased_at", ">=", event.createdAt)
    .executeTakeFirst();
  return row !== undefined;
}

/** Thrown inside events.record's transaction to roll it back when the clear cannot be redeemed. */
class NotRedeemed extends Error {}

/**
 * A redemption: one conditional UPDATE with every condition of the clear, then the event's one clear
 * (event_clears' primary key refuses a second, from this challenge or another of the event).
 *
 * A redemption first takes the event's clear lock (SqlRuntime.tryExclusive), and on PostgreSQL passes
 * over it when a concurrent redemption of the same event (from this challenge or another of the
 * event's) holds it, instead of waiting for that transaction: it either commits (and this one would find the clear used) or rolls back (and the
 * clear stays for a later re-verify). Waiting instead queued every concurrent re-verify behind the
 * others' transactions and past verify's deadline.
 */
async function redeemClear(
  rt: SqlRuntime,
  trx: Kysely<Database>,
  event: EventRecord,
  r: ClearRedemption,
): Promise<boolean> {
  if (!(await rt.tryExclusive(trx, `event-clear\n${event.tenantId}\n${r.eventId}`))) return false;
  const redeemable = trx
    .selectFrom("challenges")
    .select("id")
    .where("tenant_id", "=", event.tenantId)
    .where("id", "=", r.challengeId)
    .where("event_id", "=", r.eventId)
    .where("session", "=", r.session)
    .where("attempt", "=", r.attempt)
    .where("cleared_at", ">=", r.clearedSince)
    .where("redeemed_at", "is", null);
  const res = await trx
    .updateTable("challenges")
    .set({ redeemed_at: event.createdAt })
    .where("id", "in", redeemable)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return false;
  const claimed = await trx
    .insertInto("event_clears")
    .values({
      tenant_id: event.tenantId,
      event_id: r.eventId,
      challenge_id: r.challengeId,
      redeemed_at: event.createdAt,
      reverify_event_id: event.id,
    })
    .onConflict((oc) => oc.columns(["tenant_id", "event_id"]).doNothing())
    .executeTakeFirst();
  return Number(claimed.numInsertedOrUpdatedRows ?? 0) === 1;
}
