import type { Kysely } from "kysely";
import type { Store } from "./interfaces.js";
import { MIGRATION_NAMES } from "./migrations.js";
import { requireServableSchema } from "./schemaCompatibility.js";
import { createAgentStore, createPolicyStore } from "./sql/agentAndPolicyStores.js";
import { createChallengeStore } from "./sql/challengeStore.js";
import { createConsoleSessionStore } from "./sql/consoleSessionStore.js";
import { createEventRemovalStore } from "./sql/eventRemoval.js";
import { createFeedbackStore } from "./sql/feedbackStore.js";
import { hotStatements } from "./sql/hotStatements.js";
import { readIdempotentResponse } from "./sql/idempotencyClaim.js";
import { createInsightStore } from "./sql/insightStore.js";
import { guard } from "./sql/rows.js";
import type { SqlRuntime } from "./sql/runtime.js";
import { createApiKeyStore, createSigningKeyStore, createTenantStore } from "./sql/tenantAndKeyStores.js";
import { verifyWriteBatches } from "./sql/verifyWriteBatches.js";
import { createCounterStore, createEventStore, createIdempotencyStore } from "./sql/verifyWriteStores.js";

export type { SqlRuntime } from "./sql/runtime.js";

/**
 * The store on SQL, shared by every SQL adapter: each area is one statement or one transaction.
 * An adapter supplies the runtime (how write transactions start, how hot statements run), and may
 * supply a `patient` one for the areas off verify's path (PostgreSQL: connections with a longer
 * statement timeout), which also reads single events back and looks keys up and counts for the other
 * routes (Store.patient); verify's own reads and writes (keys, counters, events, idempotency) stay on `rt`.
 */
export function createSqlStore(rt: SqlRuntime, patient: SqlRuntime = rt): Store {
  const { db } = rt;
  const hot = hotStatements(db);
  const batches = rt.batchesInFlight && verifyWriteBatches(rt, hot, rt.batchesInFlight);
  return {
    tenants: createTenantStore(patient),
    apiKeys: createApiKeyStore(rt, hot),
    signingKeys: createSigningKeyStore(patient),
    counters: createCounterStore(rt, hot, batches),
    events: createEventStore(rt, hot, batches, patient),
    idempotency: createIdempotencyStore(rt),
    feedback: createFeedbackStore(patient),
    challenges: createChallengeStore(patient),
    agents: createAgentStore(patient),
    policies: createPolicyStore(patient),
    insights: createInsightStore(patient),
    consoleSessions: createConsoleSessionStore(patient),
    removal: createEventRemovalStore(patient),
    patient: {
      apiKeys: { findByHash: createApiKeyStore(patient, hot).findByHash },
      counters: { hit: createCounterStore(patient, hot, undefined).hit },
      idempotency: { find: createIdempotencyStore(patient).find },
    },

    // The probe's write, then the schema's floor: a release that contracted what this build needs
    // is found by the next readiness probe (SchemaAheadError, which guard lets through).
    ping: () =>
      guard("ping", async () => {
        await rt.write((conn) => rt.execute(conn, rt.writeProbe));
        await requireServableSchema(patient.db as unknown as Kysely<unknown>, MIGRATION_NAMES);
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
