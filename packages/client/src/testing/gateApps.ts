import { generateKeyPairSync } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { SignJWT } from "jose";
import { WardenClient } from "../client.js";
import type { GateOptions, GateVerdict } from "../gates/core.js";
import { wardenGate } from "../gates/express.js";
import { wardenFastify, wardenPreHandler } from "../gates/fastify.js";
import { wardenRoute } from "../gates/fetch.js";
import { wardenMiddleware } from "../gates/hono.js";
import { wardenRoute as nextRoute } from "../next.js";
import { sha256Hex } from "../subject.js";
import type { VerifyRequest } from "../types.js";

/**
 * One signup route behind each gate, for suites every gate must pass. Each handler answers 200 with
 * what it would act on: `read`, every email its framework's usual readers give it (Express's and
 * Fastify's parsed body; Hono's c.req.json(), parseBody(), formData() and the gate's verified body;
 * the fetch gate's verified body), and the gate's `pending` and `cleared`. Errors that reach the
 * framework's error path are kept in `errors` and answered 500.
 */
export const BANNED = "banned@example.org";
export const CHALLENGED = "challenged@example.org";
export const CLEAN = "ann@example.org";

/** The fake Warden's signing key, and what its receipts say (as a real one's do: docs/api.md#verdicttoken). */
const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
export const FAKE_TENANT = "tenant_test";
const ISSUER = "https://warden.local";
const AUDIENCE = "warden:verdict";

/** A receipt as Warden signs one; `change` alters a claim (a receipt for another tenant, say). */
export function fakeReceipt(
  claims: { session: string; eventId: string; action: string; decision: string },
  change: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({
    iss: ISSUER,
    aud: AUDIENCE,
    sub: claims.session,
    jti: claims.eventId,
    tid: FAKE_TENANT,
    decision: claims.decision,
    action: claims.action,
    ...change,
  })
    .setProtectedHeader({ alg: "ES256" })
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(privateKey);
}

/**
 * A Warden that denies BANNED, challenges CHALLENGED (and allows, cleared, a re-verify that carries
 * a challengeId), and allows anything else, no email included; it keeps every verify it is asked.
 */
export function fakeWarden(opts: { receipt?: Record<string, unknown>; logOnly?: boolean } = {}) {
  const asked: VerifyRequest[] = [];
  const fetch: typeof globalThis.fetch = async (_url, init) => {
    const request = JSON.parse(String(init?.body)) as VerifyRequest;
    asked.push(request);
    const hash = request.subject.emailSha256;
    const resumed = request.context?.challengeId !== undefined;
    const decision =
      hash === (await sha256Hex(BANNED))
        ? "deny"
        : hash === (await sha256Hex(CHALLENGED)) && !resumed
          ? "challenge"
          : "allow";
    const logOnly = opts.logOnly === true || request.context?.logOnly === true;
    const final = logOnly ? "allow" : decision;
    const eventId = `evt_${asked.length}`;
    const claims = { session: request.session ?? eventId, eventId, action: request.action, decision: final };
    return Response.json({
      decision: final,
      actorType: "unknown",
      confidence: 0.5,
      reasons: ["fake"],
      reasonDetails: [],
      principal: { resolved: false, operator: "", onBehalfOf: "", identityBasis: [] },
      verdictToken: await fakeReceipt(claims, opts.receipt),
      eventId,
      degraded: false,
      enforcementMode: logOnly ? "log_only" : "enforce",
      ...(resumed && final === "allow" ? { challengeCleared: true } : {}),
    });
  };
  const client = new WardenClient({
    baseUrl: "http://warden.test",
    apiKey: "wdn_test",
    fetch,
    tenantId: FAKE_TENANT,
    jwks: async () => publicKey,
  });
  return { client, asked };
}

export interface GateApp {
  url: string;
  errors: unknown[];
  close(): Promise<unknown>;
}
type Start = (opts: GateOptions) => Promise<GateApp>;

/**
 * Every string an `email` field holds in what a reader gave: FormData's repeated values included, and
 * bytes a parser kept (express.raw()) read as the handler would have to, as JSON.
 */
function emailsIn(value: unknown): string[] {
  if (value instanceof FormData) return value.getAll("email").filter((v) => typeof v === "string");
  if (value instanceof Uint8Array) {
    try {
      return emailsIn(JSON.parse(new TextDecoder().decode(value)));
    } catch {
      return [];
    }
  }
  const email = (value as { email?: unknown } | undefined)?.email;
  return typeof email === "string" ? [email] : [];
}
const answerOf = (read: string[], warden: GateVerdict | undefined) => ({
  // What the handler reads, and the form the gate hands it to act on.
  read: [...read, ...emailsIn(warden?.form)],
  pending: warden?.pending ?? null,
  cleared: warden?.verdict.challengeCleared === true,
  form: warden?.form ?? null,
  enforcementMode: warden?.enforcementMode ?? null,
});

async function listening(server: {
  once(event: "listening", cb: () => void): unknown;
  address(): unknown;
}): Promise<string> {
  await new Promise<void>((r) => server.once("listening", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const startExpress: Start = async (opts) => {
  const errors: unknown[] = [];
  const app = express();
  app.use(express.json());
  app.use(express.urlencoded());
  app.use(express.raw());
  app.post("/signup", wardenGate(opts), (req, res) => {
    res.json(answerOf(emailsIn(req.body), (req as unknown as { warden?: GateVerdict }).warden));
  });
  app.use((err: { status?: number }, _req: express.Request, res: express.Response, _next: unknown) => {
    errors.push(err);
    res.status(err.status ?? 500).json({});
  });
  const server = app.listen(0, "127.0.0.1");
  return { url: await listening(server), errors, close: async () => server.close() };
};

const startFastify: Start = async (opts) => {
  const errors: unknown[] = [];
  const app = Fastify();
  await app.register(wardenFastify as never, { client: opts.client, ticketSecret: opts.ticketSecret });
  app.setErrorHandler((err: { statusCode?: number }, _req, reply) => {
    errors.push(err);
    return reply.code(err.statusCode ?? 500).send({});
  });
  app.post("/signup", { preHandler: wardenPreHandler(opts) as never }, async (req) =>
    answerOf(emailsIn(req.body), (req as unknown as { warden?: GateVerdict }).warden),
  );
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { url, errors, close: () => app.close() };
};

const startHono: Start = async (opts) => {
  const errors: unknown[] = [];
  const app = new Hono<{ Variables: { warden: GateVerdict } }>();
  app.onError((err, c) => {
    errors.push(err);
    return c.json({}, 500);
  });
  app.post("/signup", wardenMiddleware(opts) as never, async (c) => {
    const read = emailsIn(c.get("warden").body);
    for (const reader of [() => c.req.json(), () => c.req.parseBody(), () => c.req.formData()]) {
      read.push(...emailsIn(await reader().catch(() => undefined)));
    }
    return c.json(answerOf(read, c.get("warden")));
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  return { url: await listening(server), errors, close: async () => server.close() };
};

/** A Fetch-API route served as Next.js runs it: a rejection is the platform's 500. */
async function serveRoute(route: (request: Request) => Promise<Response>) {
  const errors: unknown[] = [];
  const server = serve({
    fetch: (request: Request) =>
      route(request).catch((err: unknown) => {
        errors.push(err);
        return new Response(null, { status: 500 });
      }),
    port: 0,
    hostname: "127.0.0.1",
  });
  return { url: await listening(server), errors, close: async () => server.close() };
}

/** The fetch-API gate as a Next.js route handler runs it. */
const startFetch: Start = async (opts) =>
  serveRoute(
    wardenRoute({ ...opts, remoteAddress: () => "127.0.0.1" }, async (_request, warden) =>
      Response.json(answerOf(emailsIn(warden.body), warden)),
    ),
  );

/** @warden/client/next's route, its client given, the address from X-Forwarded-For (none sent here). */
const startNext: Start = async (opts) =>
  serveRoute(
    nextRoute(opts, async (_request, warden) => Response.json(answerOf(emailsIn(warden.body), warden))),
  );

export const GATES = {
  express: startExpress,
  fastify: startFastify,
  hono: startHono,
  fetch: startFetch,
  next: startNext,
};
export type GateName = keyof typeof GATES;
