import { type RequestView, socketJa4 } from "../subject.js";
import {
  type ChallengeRouteOptions,
  challengeRoutes,
  type FetchBody,
  type GateOptions,
  type GateVerdict,
  HTML_HEADERS,
  readFetchBody,
  requireTenant,
  runFetchGate,
} from "./core.js";

/** What the gate uses of a Hono context (structural: Hono itself is not imported). */
interface HonoContextLike {
  req: FetchBody & {
    method: string;
    url: string;
    raw: Request;
    header(): Record<string, string>;
  };
  env: unknown;
  set(key: "warden", value: GateVerdict): void;
  json(body: unknown, status?: number, headers?: Record<string, string>): Response;
}
type Next = () => Promise<void>;

/** The peer address on @hono/node-server (c.env.incoming); elsewhere pass `remoteAddress`. */
function nodePeer(c: HonoContextLike): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/** For the challenge routes: a body the gate would refuse is an empty one (they refuse it as a missing ticket). */
async function bodyOf(c: HonoContextLike): Promise<Record<string, unknown>> {
  const read = await readFetchBody(c.req.raw.headers.get("content-type"), c.req);
  return read.ok ? read.body : {};
}

function viewOf(c: HonoContextLike, remoteAddress: PeerReader | undefined): RequestView {
  const url = new URL(c.req.url);
  return {
    method: c.req.method,
    url: url.pathname + url.search,
    headers: Object.fromEntries(Object.entries(c.req.header()).map(([k, v]) => [k.toLowerCase(), v])),
    remoteAddress: (remoteAddress ?? nodePeer)(c),
    scheme: url.protocol === "https:" ? "https" : "http",
    ja4: socketJa4((c.env as { incoming?: { socket?: unknown } } | undefined)?.incoming?.socket),
  };
}

type PeerReader = (c: HonoContextLike) => string | undefined;

/**
 * Hono middleware for a gated route. It reads the body through c.req, which keeps what it read, so
 * the handler's c.req.json(), parseBody() and formData() give what was verified (see readFetchBody).
 * Allow sets `c.get("warden")`; challenge answers 428; deny 403; an error (a failing onVerdict
 * included) goes to the app's onError.
 */
export function wardenMiddleware(opts: GateOptions & { remoteAddress?: PeerReader }) {
  requireTenant(opts);
  return async (c: HonoContextLike, next: Next): Promise<Response | undefined> => {
    const answer = await runFetchGate(opts, viewOf(c, opts.remoteAddress), c.req);
    if (answer.kind === "allow") {
      c.set("warden", answer.warden);
      await next();
      return undefined;
    }
    if ("html" in answer && answer.html !== undefined)
      return new Response(answer.html, {
        status: answer.status,
        headers: { ...answer.headers, ...HTML_HEADERS },
      });
    return c.json(answer.body, answer.status, answer.headers);
  };
}

/** Handlers for `app.post(base + "/page", …)`, `app.post(base + "/issue", …)` and `app.post(base + "/complete", …)`. */
export function wardenChallengeHandlers(opts: ChallengeRouteOptions & { remoteAddress?: PeerReader }) {
  const routes = challengeRoutes(opts);
  const wrap = (handler: typeof routes.issue) => async (c: HonoContextLike) => {
    const answer = await handler(await bodyOf(c));
    return c.json(answer.body, answer.status);
  };
  return {
    page: async (c: HonoContextLike) => {
      const answer = await routes.page(viewOf(c, opts.remoteAddress));
      return c.json(answer.body, answer.status);
    },
    issue: wrap(routes.issue),
    complete: wrap(routes.complete),
  };
}
