/**
 * `@warden/client/next`: everything the package exports, with the Fetch-API gate (gates/fetch.ts)
 * shaped for the Next.js app router: a route file's `POST`, a client made from the environment on
 * the first request (never while `next build` loads the route), and the client's address taken from
 * the proxy in front of Next.js. Next.js itself is not imported: a route handler is a function from
 * a `Request` (Next's `NextRequest` is one) to a `Response`.
 */
import { WardenClient } from "./client.js";
import type { ChallengeRouteOptions, GateOptions, GateVerdict } from "./gates/core.js";
import * as gates from "./gates/fetch.js";

export * from "./index.js";

/** A route handler of the app router, as `export const POST = …` in a `route.ts`. */
export type RouteHandler = (request: Request) => Promise<Response>;

/** A client, or the function that makes it on the first request (default: clientFromEnv). */
export type ClientSource = WardenClient | (() => WardenClient);

let shared: WardenClient | undefined;

/**
 * The client configured by the environment, as WardenClient.fromEnv reads it (WARDEN_URL,
 * WARDEN_API_KEY, WARDEN_TENANT, WARDEN_TICKET_SECRET; WARDEN_TOKEN_ISSUER, WARDEN_TOKEN_AUDIENCE,
 * WARDEN_VERIFY_TIMEOUT_MS), made on the first call and shared by every route after it. The gates
 * below call it on their first request, so `next build`, which loads each route without your
 * server's environment, needs none of it; call it inside a handler, never at a module's top level. A
 * missing variable throws, naming it (a 500 from Next.js) until it is set.
 */
export function clientFromEnv(): WardenClient {
  shared ??= WardenClient.fromEnv();
  return shared;
}

/**
 * The client's address as the proxy in front of Next.js saw it: the last entry of X-Forwarded-For,
 * which that proxy appended. Next.js's route handlers get no socket address. `next start` facing
 * clients itself sets the header to the peer only when it is missing and keeps one the client sent,
 * so any address could be claimed: run Next.js behind a proxy that appends the address it saw
 * (nginx's `$proxy_add_x_forwarded_for`, a load balancer), or pass a `remoteAddress` of your own.
 */
export function forwardedClientAddress(request: Request): string | undefined {
  const hops = (request.headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((hop) => hop.trim())
    .filter((hop) => hop !== "");
  return hops.at(-1);
}

interface NextOptions {
  /** Default: clientFromEnv, on the first request. */
  client?: ClientSource;
  /** The client's address; default forwardedClientAddress (the last X-Forwarded-For entry). */
  remoteAddress?: (request: Request) => string | undefined;
}
export type NextGateOptions = Omit<GateOptions, "client"> & NextOptions;
export type NextChallengeRouteOptions = Omit<ChallengeRouteOptions, "client"> & NextOptions;

/** Makes `build` with the client on the first request, or at once when the client is given itself. */
function once<T>(source: ClientSource | undefined, build: (client: WardenClient) => T): () => T {
  let made: T | undefined;
  const make = () => {
    made ??= build(source instanceof WardenClient ? source : (source ?? clientFromEnv)());
    return made;
  };
  // A client given as such is checked as the other gates check theirs: when the route is made.
  if (source instanceof WardenClient) make();
  return make;
}

/**
 * A gated route: `export const POST = wardenRoute({ action: "signup", email: (body) => body.email },
 * async (request, warden) => …)` in `app/signup/route.ts`. The gate and its answers are the Fetch-API
 * gate's (@warden/client's wardenRoute): allow runs the handler with `warden` (its receipt checked;
 * the request's body is spent, act on `warden.form`), challenge answers 428, deny 403, a refused body
 * 400 or 415, a plain HTML form post gets pages; an error (a failing onVerdict included) rejects,
 * which Next.js answers 500.
 */
export function wardenRoute(
  opts: NextGateOptions,
  handler: (request: Request, warden: GateVerdict) => Response | Promise<Response>,
): RouteHandler {
  const route = once(opts.client, (client) =>
    gates.wardenRoute(
      { ...opts, client, remoteAddress: opts.remoteAddress ?? forwardedClientAddress },
      handler,
    ),
  );
  return async (request) => route()(request);
}

const ROUTE_NOT_FOUND = { error: "not_found", code: "route_not_found", message: "No such route." };
const STEPS = ["page", "issue", "complete"] as const;

/**
 * The challenge routes in one route file, `app/warden/challenge/[step]/route.ts`: `export const POST =
 * wardenChallengeRoute()` answers POST `/warden/challenge/page`, `/issue` and `/complete` (by the
 * path's last segment; any other is 404). Give it the gate's `remoteAddress` and `trustedProxies`:
 * the page token is bound to the client's network.
 */
export function wardenChallengeRoute(opts: NextChallengeRouteOptions = {}): RouteHandler {
  const handlers = once(opts.client, (client) =>
    gates.wardenChallengeRouteHandlers({
      ...opts,
      client,
      remoteAddress: opts.remoteAddress ?? forwardedClientAddress,
    }),
  );
  return async (request) => {
    const step = STEPS.find((name) => new URL(request.url).pathname.endsWith(`/${name}`));
    return step ? handlers()[step](request) : Response.json(ROUTE_NOT_FOUND, { status: 404 });
  };
}
