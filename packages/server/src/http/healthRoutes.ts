import type { FastifyInstance } from "fastify";
import type { Store } from "../store/interfaces.js";

/**
 * Health for load balancers and monitoring:
 * - /healthz: the process is up (restart it when this fails);
 * - /readyz: send this process traffic. True while it serves, whatever its store's state: with the
 *   store down verify still answers (the degraded challenge, never an allow) and that answer is the
 *   one callers should get; a balancer that took every process out on a store outage turned it into
 *   a total one (its 503s are no verdict at all). The body still says whether the store takes
 *   writes. While the process shuts down Fastify answers 503 here, so the balancer drains it.
 * - /readyz/store: whether the store takes writes (503 when not): for alerting and for operators who
 *   want a process out of rotation while its own store connection is broken.
 */
export function registerHealth(app: FastifyInstance, store: Store): void {
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
    async (request) => ({ ok: true, store: (await storeUp(request.log)) ? "up" : "down" }),
  );
  app.get(
    "/readyz/store",
    { schema: { summary: "The store can take writes", tags: ["health"] } },
    async (request, reply) =>
      (await storeUp(request.log))
        ? { ok: true, store: "up" }
        : reply.code(503).send({ ok: false, store: "down" }),
  );
}
