import http from "node:http";
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import { errorBody } from "../errors.js";
import { guardConnections } from "./connectionGuard.js";
import { clientErrorHandler } from "./errorHandler.js";

/**
 * The operator's surfaces (metrics, the API documentation, the console) on an address of their own
 * (WARDEN_ADMIN_PORT): the same app answers there, routed from a second HTTP server, and the public
 * listener answers 404 for those routes. The API stays on both (the console reads it from its own
 * origin; callers use the public one).
 *
 * The test is on the route the router chose, not on the URL as sent: find-my-way decodes percent
 * escapes (`/%6detrics`), ends the path at `?`, `#` (and `;` when told to), and routes absolute-form
 * targets (`http://host/metrics`) by their path, so any spelling it takes for an admin route is
 * refused, whatever normalisation it applies now or later.
 */
const ADMIN_ROUTES = /^\/(?:metrics|openapi\.json|docs|console)(?:\/|$)/;

/** Marks a request that arrived on the admin listener. */
const onAdminListener = new WeakSet<http.IncomingMessage>();

/** Whether a route (its pattern as registered, e.g. `/docs/static/*`) is one of the admin surfaces. */
export const isAdminRoute = (route: string | undefined): boolean =>
  route !== undefined && ADMIN_ROUTES.test(route);

/** With an admin listener configured: the admin routes are not found on the public listener. */
export function keepAdminPathsOffPublic(app: FastifyInstance): void {
  app.addHook("onRequest", async (request, reply) => {
    if (isAdminRoute(request.routeOptions.url) && !onAdminListener.has(request.raw)) {
      return reply.code(404).send(errorBody("route_not_found"));
    }
  });
}

/** The public listener's connection settings, which the admin listener keeps as well. */
type ConnectionSettings = Pick<
  Config,
  | "headersTimeoutMs"
  | "requestTimeoutMs"
  | "idleTimeoutMs"
  | "keepAliveTimeoutMs"
  | "maxConnections"
  | "maxConnectionsPerAddress"
>;

/**
 * Starts the admin listener for `app` (after `app.ready()`); resolves its URL. Its sockets are held
 * to the same timeouts and limits as the public listener's (app.ts), each listener counting its own.
 */
export async function listenAdmin(
  app: FastifyInstance,
  host: string,
  port: number,
  settings: ConnectionSettings,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      onAdminListener.add(req);
      app.routing(req, res);
    },
  );
  server.keepAliveTimeout = settings.keepAliveTimeoutMs;
  server.setTimeout(settings.idleTimeoutMs);
  server.on("clientError", clientErrorHandler);
  guardConnections(server, settings);
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
