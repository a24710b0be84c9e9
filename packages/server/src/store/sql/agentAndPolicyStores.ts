import type { Kysely } from "kysely";
import type { AgentKeyRecord, AgentStore, PolicyStore } from "../interfaces.js";
import type { Database } from "../schema.js";
import { bool, guard } from "./rows.js";
import type { SqlRuntime } from "./runtime.js";

/**
 * The agent-operator registry on SQL: one row per operator, keys as JSON text. Few rows, written by
 * the CLI only: a put reads every other operator's keys inside its serialized transaction.
 */
export function createAgentStore(rt: SqlRuntime): AgentStore {
  const { db } = rt;
  return {
    put: (a) =>
      guard("agents.put", () =>
        rt.writeTransaction(async (trx) => {
          // One writer of the registry at a time, so two operators cannot both take a key.
          await rt.serialize(trx, "agent_operators");
          const others = await trx
            .selectFrom("agent_operators")
            .select(["operator", "keys"])
            .where("operator", "!=", a.operator)
            .orderBy("operator")
            .execute();
          const wanted = new Set(a.keys.map((k) => k.thumbprint));
          for (const other of others) {
            const taken = (JSON.parse(other.keys) as AgentKeyRecord[]).find((k) => wanted.has(k.thumbprint));
            if (taken) return { ok: false, thumbprint: taken.thumbprint, operator: other.operator } as const;
          }
          const row = {
            operator: a.operator,
            signature_agent: a.signatureAgent,
            keys: JSON.stringify(a.keys),
            fetch_directory: bool(a.fetchDirectory),
            created_at: a.createdAt,
            updated_at: a.updatedAt,
          };
          await trx
            .insertInto("agent_operators")
            .values(row)
            .onConflict((oc) =>
              oc.column("operator").doUpdateSet({
                signature_agent: row.signature_agent,
                keys: row.keys,
                fetch_directory: row.fetch_directory,
                updated_at: row.updated_at,
              }),
            )
            .execute();
          return { ok: true } as const;
        }),
      ),
    remove: (operator) =>
      guard("agents.remove", () =>
        rt.write(async (conn) => {
          const res = await conn
            .deleteFrom("agent_operators")
            .where("operator", "=", operator)
            .executeTakeFirst();
          return Number(res.numDeletedRows) === 1;
        }),
      ),
    list: () =>
      guard("agents.list", async () => {
        const rows = await db.selectFrom("agent_operators").selectAll().orderBy("operator").execute();
        return rows.map((r) => ({
          operator: r.operator,
          signatureAgent: r.signature_agent,
          keys: JSON.parse(r.keys) as AgentKeyRecord[],
          fetchDirectory: Number(r.fetch_directory) === 1,
          createdAt: Number(r.created_at),
          updatedAt: Number(r.updated_at),
        }));
      }),
  };
}

/** Tenant policy versions on SQL: the next version is chosen inside a transaction serialized per tenant. */
export function createPolicyStore(rt: SqlRuntime): PolicyStore {
  const { db } = rt;
  return {
    put: (tenantId, document, now) =>
      guard("policies.put", () =>
        rt.writeTransaction(async (trx) => {
          await rt.serialize(trx, `policy:${tenantId}`);
          const version = (await topVersion(trx, tenantId)) + 1;
          await trx
            .insertInto("tenant_policies")
            .values({ tenant_id: tenantId, version, document, created_at: now })
            .execute();
          return version;
        }),
      ),
    putIfCurrent: (tenantId, document, basedOn, now) =>
      guard("policies.putIfCurrent", () =>
        rt.writeTransaction(async (trx) => {
          await rt.serialize(trx, `policy:${tenantId}`);
          if ((await topVersion(trx, tenantId)) !== basedOn) return undefined;
          const version = basedOn + 1;
          await trx
            .insertInto("tenant_policies")
            .values({ tenant_id: tenantId, version, document, created_at: now })
            .execute();
          return version;
        }),
      ),
    current: (tenantId) =>
      guard("policies.current", async () => {
        const row = await db
          .selectFrom("tenant_policies")
          .selectAll()
          .where("tenant_id", "=", tenantId)
          .orderBy("version", "desc")
          .limit(1)
          .executeTakeFirst();
        return row
          ? {
              tenantId: row.tenant_id,
              version: Number(row.version),
              document: row.document,
              createdAt: Number(row.created_at),
            }
          : undefined;
      }),
  };
}

/** The tenant's highest policy version, 0 when it never set one. */
async function topVersion(trx: Kysely<Database>, tenantId: string): Promise<number> {
  const top = await trx
    .selectFrom("tenant_policies")
    .select((eb) => eb.fn.max("version").as("v"))
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  return Number(top?.v ?? 0);
}
