import type { ConsoleSessionStore } from "../interfaces.js";
import { guard, keyFromRow, tenantFromRow } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

/** Console sign-ins (ConsoleSessionStore): one row per session, keyed by its secret's hash. */
export function createConsoleSessionStore(rt: SqlRuntime): ConsoleSessionStore {
  const { db } = rt;
  return {
    create: (session) =>
      guard("consoleSessions.create", async () => {
        await rt.write((conn) =>
          conn
            .insertInto("console_sessions")
            .values({
              id_hash: session.idHash,
              tenant_id: session.tenantId,
              key_id: session.keyId,
              created_at: session.createdAt,
              expires_at: session.expiresAt,
            })
            .execute(),
        );
      }),
    find: (idHash, now) =>
      guard("consoleSessions.find", async () => {
        const row = await db
          .selectFrom("console_sessions as s")
          .innerJoin("api_keys as k", "k.id", "s.key_id")
          .innerJoin("tenants as t", "t.id", "k.tenant_id")
          .selectAll("k")
          .select([
            "s.id_hash",
            "s.created_at as s_created_at",
            "s.expires_at as s_expires_at",
            "t.raw_pii as t_raw_pii",
            "t.log_only as t_log_only",
            "t.created_at as t_created_at",
          ])
          .where("s.id_hash", "=", idHash)
          .where("s.expires_at", ">", now)
          .executeTakeFirst();
        if (!row) return undefined;
        const key = keyFromRow(row);
        return {
          session: {
            idHash: row.id_hash,
            tenantId: key.tenantId,
            keyId: key.id,
            createdAt: Number(row.s_created_at),
            expiresAt: Number(row.s_expires_at),
          },
          key,
          tenant: tenantFromRow({
            id: key.tenantId,
            raw_pii: row.t_raw_pii,
            log_only: row.t_log_only,
            created_at: row.t_created_at,
          }),
        };
      }),
    delete: (idHash) =>
      guard("consoleSessions.delete", async () => {
        const result = await rt.write((conn) =>
          conn.deleteFrom("console_sessions").where("id_hash", "=", idHash).executeTakeFirst(),
        );
        return Number(result.numDeletedRows) > 0;
      }),
    purgeExpired: (now) =>
      guard("consoleSessions.purgeExpired", async () => {
        const result = await rt.write((conn) =>
          conn.deleteFrom("console_sessions").where("expires_at", "<=", now).executeTakeFirst(),
        );
        return Number(result.numDeletedRows);
      }),
  };
}
