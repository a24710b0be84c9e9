import type { RequestView } from "../subject.js";
import {
  type ChallengeRouteOptions,
  challengeRoutes,
  type GateOptions,
  type GateVerdict,
  HTML_HEADERS,
  type RouteAnswer,
  readFetchBody,
  requireTenant,
  runFetchGate,
} from "./core.js";

/**
 * The client's address, which a fetch-API Request does not carry: what your platform gives (on
 * Vercel, the first `x-forwarded-for` hop it writes); without it, no network is sent to Warden.
 */
type PeerReader = (request: Request) => string | undefined;

function viewOf(request: Request, remoteAddress: PeerReader | undefined): RequestView {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return {
    method: request.method,
    url: url.pathname + url.search,
    headers,
    remoteAddress: remoteAddress?.(request),
    scheme: url.protocol === "https:" ? "https" : "http",
  };
}

/**
 * A gated route handler for the Fetch API (Next.js app router, Bun, Deno, workers):
 * `export const POST = wardenRoute(gate, async (request, warden) => …)`. The gate reads the body
 * (so the request's own is spent): the handler acts on `warden.body`, the very object verified.
 * Challenge answers 428, deny 403, a refused body 400 or 415; an error (a failing onVerdict
 * included) rejects, which your platform answers 500.
 */
export function wardenRoute(
  opts: GateOptions & { remoteAddress?: PeerReader },
  handler: (request: Request, warden: GateVerdict) => Response | Promise<Response>,
) {
  requireTenant(opts);
  return async (request: Request): Promise<Response> => {
    const answer = await runFetchGate(opts, viewOf(request, opts.remoteAddress), request);
    if (answer.kind === "allow") return handler(request, answer.warden);
    if ("html" in answer && answer.html !== undefined)
      return new Response(answer.html, {
        status: answer.status,
        headers: { ...answer.headers, ...HTML_HEADERS },
      });
    return Response.json(answer.body, { status: answer.status, headers: answer.headers });
  };
}

/** Route handlers for POST `…/page`, `…/issue` and `…/complete` (one route file each, in Next.js). */
export function wardenChallengeRouteHandlers(opts: ChallengeRouteOptions & { remoteAddress?: PeerReader }) {
  const routes = challengeRoutes(opts);
  const respond = ({ status, body }: RouteAnswer) => Response.json(body, { status });
  const withBody = (route: typeof routes.issue) => async (request: Request) => {
    const read = await readFetchBody(request.headers.get("content-type"), request);
    return respond(await route(read.ok ? read.body : {}));
  };
  return {
    page: async (request: Request) => respond(await routes.page(viewOf(request, opts.remoteAddress))),
    issue: withBody(routes.issue),
    complete: withBody(routes.complete),
  };
}
