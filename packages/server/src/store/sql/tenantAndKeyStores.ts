import type { Kysely } from "kysely";
import type { ApiKeyStore, SigningKeyStore, TenantStore } from "../interfaces.js";
import type { Database } from "../schema.js";
import type { hotStatements, KeyWithTenantRow } from "./hotStatements.js";
import { bool, guard, keyFromRow, signingKeyFromRow, signingKeyToRow, tenantFromRow } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

type Hot = ReturnType<typeof hotStatements>;

/** Whether the key exists unrevoked, read on `conn` (inside a write when one is open). */
export async function keyActive(
  rt: SqlRuntime,
  hot: Hot,
  conn: Kysely<Database>,
  keyId: string,
): Promise<boolean> {
  return (await rt.execute(conn, hot.keyIsActive({ keyId }))).rows.length > 0;
}

/** Tenants on SQL: each call one statement. */
export function createTenantStore(rt: SqlRuntime): TenantStore {
  const { db } = rt;
  return {
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
  };
}

/** API keys on SQL: found by hash with their tenant in one precompiled join; revoked once. */
export function createApiKeyStore(rt: SqlRuntime, hot: Hot): ApiKeyStore {
  const { db } = rt;
  return {
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
    isActive: (keyId) => guard("apiKeys.isActive", () => keyActive(rt, hot, db, keyId)),
  };
}

/** Signing keys on SQL: a first insert and a rotation are serialized, so one key is active. */
export function createSigningKeyStore(rt: SqlRuntime): SigningKeyStore {
  const { db } = rt;
  return {
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
  };
}
