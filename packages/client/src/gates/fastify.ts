import type { IncomingMessage } from "node:http";
import { type RequestView, socketJa4 } from "../subject.js";
import {
  bodyObject,
  type ChallengeRouteOptions,
  challengeRoutes,
  type GateOptions,
  type GateVerdict,
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
  return async (request: FastifyRequestLike, reply: FastifyReplyLike): Promise<void> => {
    const answer = await runGate(opts, viewOf(request), request.body);
    if (answer.kind === "allow") {
      request.warden = answer.warden;
      return;
    }
    await reply.code(answer.status).headers(answer.headers).send(answer.body);
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
