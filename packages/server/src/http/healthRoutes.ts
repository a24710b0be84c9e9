import type { FastifyInstance } from "fastify";
import type { Store } from "../store/interfaces.js";

export function registerHealth(app: FastifyInstance, store: Store): void {
  app.get("/healthz", { schema: { summary: "The process is up", tags: ["health"] } }, async () => ({
    ok: true,
  }));
  app.get(
    "/readyz",
    { schema: { summary: "The store can take writes", tags: ["health"] } },
    async (request, reply) => {
      try {
        await store.ping();
        return { ok: true, store: "up" };
      } catch (err) {
        request.log.warn({ err }, "readiness: store unreachable");
        return reply.code(503).send({ ok: false, store: "down" });
      }
    },
  );
}
