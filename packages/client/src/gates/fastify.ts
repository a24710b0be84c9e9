import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { type RequestView, socketJa4 } from "../subject.js";
import {
  bodyObject,
  type ChallengeRouteOptions,
  challengeRoutes,
  type GateOptions,
  type GateVerdict,
  HTML_HEADERS,
  RefusedBody,
  readFetchBody,
  requireTenant,
  runGate,
} from "./core.js";

/** What the gate reads of a Fastify request and reply (structural: Fastify itself is not imported). */
interface FastifyRequestLike {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body?: unknown;
  protocol?: "http" | "https";
  raw: IncomingMessage;
  warden?: GateVerdict;
}
interface FastifyReplyLike {
  code(status: number): this;
  headers(values: Record<string, string>): this;
  send(body?: unknown): this;
}
interface FastifyLike {
  post(
    path: string,
    handler: (req: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>,
  ): unknown;
}
interface FastifyPluginHost extends FastifyLike {
  hasRequestDecorator(name: string): boolean;
  decorateRequest(name: string, value: null): unknown;
  addContentTypeParser(
    types: string[],
    options: { parseAs: "buffer" },
    parser: (request: { headers: IncomingHttpHeaders }, body: Buffer) => Promise<unknown>,
  ): unknown;
}

/** The form media types Fastify does not parse itself. */
const FORM_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data"];

/**
 * A form body as the gate of Hono and the Fetch API reads one (readFetchBody): the platform's
 * FormData, a field sent twice refused. What it cannot read is left as a RefusedBody, which the gate
 * answers with its 400 (Fastify's own error would not be the Error schema).
 */
async function parseForm(request: { headers: IncomingHttpHeaders }, raw: Buffer): Promise<unknown> {
  const type = request.headers["content-type"] ?? "";
  const read = await readFetchBody(
    type,
    new Response(new Uint8Array(raw), { headers: { "content-type": type } }),
  );
  return read.ok ? read.body : new RefusedBody(read.refused);
}

const bodyOf = (req: FastifyRequestLike): Record<string, unknown> => bodyObject(req.body);

const viewOf = (request: FastifyRequestLike): RequestView => ({
  method: request.method,
  url: request.url,
  headers: request.headers,
  remoteAddress: request.raw.socket.remoteAddress,
  scheme: request.protocol ?? "http",
  ja4: socketJa4(request.raw.socket),
});

/**
 * A preHandler for a gated route: it verifies request.body, the object the handler reads, as
 * Fastify's content-type parsers made it (a body that is not an object is refused with 415). Allow
 * sets `request.warden`; challenge answers 428; deny 403; an error (a failing onVerdict included)
 * goes to Fastify's error handler.
 */
export function wardenPreHandler(opts: GateOptions) {
  requireTenant(opts);
  return async (request: FastifyRequestLike, reply: FastifyReplyLike): Promise<void> => {
    const answer = await runGate(opts, viewOf(request), request.body);
    if (answer.kind === "allow") {
      request.warden = answer.warden;
      return;
    }
    if ("html" in answer && answer.html !== undefined) {
      await reply
        .code(answer.status)
        .headers({ ...answer.headers, ...HTML_HEADERS })
        .send(answer.html);
    } else await reply.code(answer.status).headers(answer.headers).send(answer.body);
  };
}

/** Registers POST `${base}/page`, `${base}/issue` and `${base}/complete` for the browser element. */
export function registerWardenChallengeRoutes(
  app: FastifyLike,
  opts: ChallengeRouteOptions & { base?: string },
): void {
  const routes = challengeRoutes(opts);
  const base = opts.base ?? "/warden/challenge";
  for (const [name, handler] of [
    ["page", (req: FastifyRequestLike) => routes.page(viewOf(req))],
    ["issue", (req: FastifyRequestLike) => routes.issue(bodyOf(req))],
    ["complete", (req: FastifyRequestLike) => routes.complete(bodyOf(req))],
  ] as const) {
    app.post(`${base}/${name}`, async (req, reply) => {
      const answer = await handler(req);
      return reply.code(answer.status).send(answer.body);
    });
  }
}

/**
 * The Fastify plugin: `await app.register(wardenFastify, { client, ticketSecret })` decorates the
 * request with `warden`, parses form posts (urlencoded and multipart, as the Hono and Fetch-API gates
 * do: a field sent twice is refused with 400 duplicate_field) and registers the challenge routes. It
 * applies to the instance it is registered on, not only inside its own scope, as fastify-plugin's
 * plugins do.
 */
export const wardenFastify = Object.assign(
  async (app: FastifyPluginHost, opts: ChallengeRouteOptions & { base?: string }): Promise<void> => {
    if (!app.hasRequestDecorator("warden")) app.decorateRequest("warden", null);
    app.addContentTypeParser(FORM_TYPES, { parseAs: "buffer" }, parseForm);
    registerWardenChallengeRoutes(app, opts);
  },
  { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "@warden/client" },
);
