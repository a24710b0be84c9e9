import { type RequestView, socketJa4 } from "../subject.js";
import {
  bodyObject,
  type ChallengeRouteOptions,
  challengeRoutes,
  type GateOptions,
  type GateVerdict,
  runGate,
} from "./core.js";

/** What the gate uses of a Hono context (structural: Hono itself is not imported). */
interface HonoContextLike {
  req: {
    method: string;
    url: string;
    raw: Request;
    header(): Record<string, string>;
    parseBody(): Promise<Record<string, unknown>>;
    json(): Promise<unknown>;
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

/** The parsed body, or undefined when it is not JSON or form data, or does not parse. */
async function parsedBody(c: HonoContextLike): Promise<unknown> {
  const type = c.req.raw.headers.get("content-type") ?? "";
  try {
    if (type.includes("application/json")) return await c.req.json();
    if (type.includes("form")) return await c.req.parseBody();
  } catch {
    // unreadable: the gate refuses it (runGate)
  }
  return undefined;
}

/** For the challenge routes: an unreadable body is an empty one (they refuse it as a missing ticket). */
const bodyOf = async (c: HonoContextLike): Promise<Record<string, unknown>> =>
  bodyObject(await parsedBody(c));

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

/** Hono middleware for a gated route: allow sets `c.get("warden")`; challenge answers 428; deny 403. */
export function wardenMiddleware(opts: GateOptions & { remoteAddress?: PeerReader }) {
  return async (c: HonoContextLike, next: Next): Promise<Response | undefined> => {
    const answer = await runGate(opts, viewOf(c, opts.remoteAddress), await parsedBody(c));
    if (answer.kind === "allow") {
      c.set("warden", { verdict: answer.verdict, session: answer.session, pending: answer.pending });
      await next();
      return undefined;
    }
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
