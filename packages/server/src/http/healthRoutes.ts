import type { FastifyInstance } from "fastify";
import type { Store } from "../store/interfaces.js";
import { SchemaAheadError } from "../store/schemaCompatibility.js";
import { type RecentVerdicts, UNHEALTHY_VERIFY } from "./recentVerdicts.js";

/**
 * Health for load balancers and monitoring:
 * - /healthz: the process is up (restart it when this fails);
 * - /readyz: send this process traffic. True while it serves, whatever its store's state: with the
 *   store down verify still answers (the degraded challenge, never an allow) and that answer is the
 *   one callers should get; a balancer that took every process out on a store outage turned it into
 *   a total one (its 503s are no verdict at all). The body still says whether the store takes
 *   writes. While the process shuts down Fastify answers 503 here, so the balancer drains it. One
 *   fault is this process's own, never the store's: a schema newer than this build may serve
 *   (store "ahead", store/schemaCompatibility.ts) answers 503, so that the balancer sends traffic
 *   to the release that migrated it.
 * - /readyz/store: whether verify can score (503 when not): the store takes a probe's write, and most
 *   of this process's recent verify answers were not degraded (UNHEALTHY_VERIFY: more than half of
 *   at least 20 in 30 s, and one still in the last 5 s), so that what the probe cannot see (a table the runtime role may not write,
 *   a schema the running code does not know, locks, host contention) still shows. For alerting, and
 *   for operators who want a process out of rotation while it cannot score.
 * Both bodies say `verify`: "scoring", "degraded" (as above) or "idle" (too few recent answers to say).
 */
export function registerHealth(app: FastifyInstance, store: Store, recent: RecentVerdicts): void {
  app.get("/healthz", { schema: { summary: "The process is up", tags: ["health"] } }, async () => ({
    ok: true,
  }));
  /** "ahead": the schema is newer than this build may serve (SchemaAheadError): take it out. */
  const storeState = async (log: FastifyInstance["log"]): Promise<"up" | "down" | "ahead"> => {
    try {
      await store.ping();
      return "up";
    } catch (err) {
      if (err instanceof SchemaAheadError) {
        log.error({ err }, `readiness: this process cannot serve the database's schema: ${err.message}`);
        return "ahead";
      }
      log.warn({ err }, "readiness: the store cannot take writes");
      return "down";
    }
  };
  app.get(
    "/readyz",
    {
      schema: {
        summary: "Send this process traffic (the store's state is reported, not required)",
        tags: ["health"],
      },
    },
    async (request, reply) => {
      const state = await storeState(request.log);
      if (state === "ahead") return reply.code(503).send({ ok: false, store: state, ...verifyState() });
      return { ok: true, store: state, ...verifyState() };
    },
  );
  app.get(
    "/readyz/store",
    {
      schema: {
        summary: "Verify can score: the store takes writes and recent answers were not mostly degraded",
        tags: ["health"],
      },
    },
    async (request, reply) => {
      const state = await storeState(request.log);
      const verify = verifyState();
      if (state === "up" && verify.verify !== "degraded") return { ok: true, store: state, ...verify };
      if (verify.verify === "degraded") {
        request.log.warn(verify, "readiness: most recent verify answers were degraded");
      }
      return reply.code(503).send({ ok: false, store: state, ...verify });
    },
  );

  function verifyState(): { verify: "scoring" | "degraded" | "idle"; answers: number; degraded: number } {
    const { unhealthy, counts } = recent.unhealthy();
    const verify = unhealthy ? "degraded" : counts.answers < UNHEALTHY_VERIFY.minAnswers ? "idle" : "scoring";
    return { verify, ...counts };
  }
}
