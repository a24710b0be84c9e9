import http from "node:http";
import type { FastifyInstance } from "fastify";
import { errorBody } from "../errors.js";

/**
 * The operator's surfaces (metrics, the API documentation, the console) on an address of their own
 * (WARDEN_ADMIN_PORT): the same app answers there, routed from a second HTTP server, and the public
 * listener answers 404 for those paths. The API stays on both (the console reads it from its own
 * origin; callers use the public one).
 */
const ADMIN_PATHS = /^\/(?:metrics|openapi\.json|docs|console)(?:[/?]|$)/;

/** Marks a request that arrived on the admin listener. */
const onAdminListener = new WeakSet<http.IncomingMessage>();

export const isAdminPath = (url: string): boolean => ADMIN_PATHS.test(url);

/** With an admin listener configured: the admin paths are not found on the public listener. */
export function keepAdminPathsOffPublic(app: FastifyInstance): void {
  app.addHook("onRequest", async (request, reply) => {
    if (isAdminPath(request.url) && !onAdminListener.has(request.raw)) {
      return reply.code(404).send(errorBody("route_not_found"));
    }
  });
}

/** Starts the admin listener for `app` (after `app.ready()`); resolves its URL. */
export async function listenAdmin(
  app: FastifyInstance,
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    onAdminListener.add(req);
    app.routing(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
