import type { IncomingMessage, ServerResponse } from "node:http";
import { type RequestView, socketJa4 } from "../subject.js";
import {
  bodyObject,
  type ChallengeRouteOptions,
  challengeRoutes,
  type GateOptions,
  type GateVerdict,
  HTML_HEADERS,
  requireTenant,
  runGate,
} from "./core.js";

/** What the gate reads of an Express request (structural: Express itself is not imported). */
interface ExpressRequest extends IncomingMessage {
  originalUrl?: string;
  path?: string;
  body?: unknown;
  secure?: boolean;
  warden?: GateVerdict;
}
interface ExpressResponse extends ServerResponse {
  status(code: number): this;
  set(headers: Record<string, string>): this;
  json(body: unknown): this;
  send(body: string): this;
}
type Next = (err?: unknown) => void;

const bodyOf = (req: ExpressRequest): Record<string, unknown> => bodyObject(req.body);

const viewOf = (req: ExpressRequest): RequestView => ({
  method: req.method ?? "GET",
  url: req.originalUrl ?? req.url ?? "/",
  headers: req.headers,
  remoteAddress: req.socket.remoteAddress,
  scheme: req.secure ? "https" : "http",
  ja4: socketJa4(req.socket),
});

/**
 * Express middleware for a gated route, mounted after the body parsers whose bodies it may take
 * (express.json(), express.urlencoded(), multer): it verifies req.body, the object the handler
 * reads, and refuses a body no parser made into an object (415). Allow: `req.warden` holds the
 * verdict, then `next()`. Challenge: 428 JSON with the ticket. Deny: 403. An error (a failing
 * onVerdict included) goes to `next(err)`.
 */
export function wardenGate(opts: GateOptions) {
  requireTenant(opts);
  return (req: ExpressRequest, res: ExpressResponse, next: Next): void => {
    runGate(opts, viewOf(req), req.body).then((answer) => {
      if (answer.kind === "allow") {
        req.warden = answer.warden;
        next();
      } else if ("html" in answer && answer.html !== undefined) {
        res
          .status(answer.status)
          .set({ ...answer.headers, ...HTML_HEADERS })
          .send(answer.html);
      } else res.status(answer.status).set(answer.headers).json(answer.body);
    }, next);
  };
}

/**
 * Express middleware answering POST `${base}/page` (a page token for @warden/browser's watchPage),
 * `${base}/issue` and `${base}/complete` for the browser element.
 */
export function wardenChallengeRoutes(opts: ChallengeRouteOptions & { base?: string }) {
  const routes = challengeRoutes(opts);
  const base = opts.base ?? "/warden/challenge";
  return (req: ExpressRequest, res: ExpressResponse, next: Next): void => {
    const path = req.path ?? req.url ?? "";
    const handler =
      req.method !== "POST"
        ? undefined
        : path === `${base}/page`
          ? () => routes.page(viewOf(req))
          : path === `${base}/issue`
            ? () => routes.issue(bodyOf(req))
            : path === `${base}/complete`
              ? () => routes.complete(bodyOf(req))
              : undefined;
    if (!handler) {
      next();
      return;
    }
    handler().then((answer) => {
      res.status(answer.status).json(answer.body);
    }, next);
  };
}
