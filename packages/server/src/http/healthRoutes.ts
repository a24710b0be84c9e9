import type { FastifyInstance } from "fastify";
import type { Store } from "../store/interfaces.js";
import { type RecentVerdicts, UNHEALTHY_VERIFY } from "./recentVerdicts.js";

/**
 * Health for load balancers and monitoring:
 * - /healthz: the process is up (restart it when this fails);
 * - /readyz: send this process traffic. True while it serves, whatever its store's state: with the
 *   store down verify still answers (the degraded challenge, never an allow) and that answer is the
 *   one callers should get; a balancer that took every process out on a store outage turned it into
 *   a total one (its 503s are no verdict at all). The body still says whether the store takes
 *   writes. While the process shuts down Fastify answers 503 here, so the balancer drains it.
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
  const storeUp = async (log: FastifyInstance["log"]): Promise<boolean> => {
    try {
      await store.ping();
      return true;
    } catch (err) {
      log.warn({ err }, "readiness: the store cannot take writes");
      return false;
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
    async (request) => ({ ok: true, store: (await storeUp(request.log)) ? "up" : "down", ...verifyState() }),
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
      const up = await storeUp(request.log);
      const verify = verifyState();
      if (up && verify.verify !== "degraded") return { ok: true, store: "up", ...verify };
      if (verify.verify === "degraded") {
        request.log.warn(verify, "readiness: most recent verify answers were degraded");
      }
      return reply.code(503).send({ ok: false, store: up ? "up" : "down", ...verify });
    },
  );

  function verifyState(): { verify: "scoring" | "degraded" | "idle"; answers: number; degraded: number } {
    const { unhealthy, counts } = recent.unhealthy();
    const verify = unhealthy ? "degraded" : counts.answers < UNHEALTHY_VERIFY.minAnswers ? "idle" : "scoring";
    return { verify, ...counts };
  }
}
