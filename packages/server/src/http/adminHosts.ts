import net from "node:net";
import type { FastifyInstance } from "fastify";
import type { AdminHosts } from "../config.js";
import { errorBody } from "../errors.js";
import { isAdminRoute } from "./adminListener.js";

/**
 * The operator's surfaces (metrics, the API documentation, the console) answer only to a Host they
 * can be reached by without a public DNS name that someone else controls: an IP address, `localhost`
 * (and names under it), a name of one label (a container's or a service's, `warden:8080`), or a name
 * listed in WARDEN_ADMIN_HOSTS. A page on a site whose DNS answers with Warden's address (DNS
 * rebinding) sends its own name as Host, so it cannot read them; a Prometheus scrape by address or
 * service name, and the console at a listed name, can.
 */
/** The name of a Host header without its port, lower-cased (IPv6 literals without their brackets). */
function hostName(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith("["))
    return value.slice(1, value.indexOf("]") === -1 ? undefined : value.indexOf("]"));
  const colon = value.lastIndexOf(":");
  const name = colon === -1 ? value : value.slice(0, colon);
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/** Whether an admin route may answer a request with this Host header. */
export function adminHostAllowed(host: string | undefined, listed: AdminHosts): boolean {
  if (listed === "*") return true;
  if (host === undefined || host.trim() === "") return false;
  const name = hostName(host);
  if (name === "") return false;
  if (net.isIP(name) !== 0) return true;
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (!name.includes(".")) return true;
  return listed.includes(name);
}

/** Refuses the admin routes to a Host they may not answer (403 host_not_allowed). */
export function guardAdminHosts(app: FastifyInstance, listed: AdminHosts): void {
  if (listed === "*") return;
  app.addHook("onRequest", async (request, reply) => {
    if (isAdminRoute(request.routeOptions.url) && !adminHostAllowed(request.headers.host, listed)) {
      return reply.code(403).send(errorBody("host_not_allowed"));
    }
  });
}
