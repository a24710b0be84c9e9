import { createHash, randomBytes } from "node:crypto";
import "@fastify/cookie";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { hashApiKey, isWellFormedApiKey } from "../admin/apiKeys.js";
import type { Scope } from "../domain.js";
import { ApiError, ErrorResponse } from "../errors.js";
import { clientSource } from "../http/connectionGuard.js";
import { applyRateLimit } from "../http/rateLimit.js";
import { sha256Hex } from "../lib/crypto.js";
import type { Caller } from "../operations/caller.js";
import { rateLimitHit, rateLimitState } from "../operations/rateLimitWindow.js";
import type { Store } from "../store/interfaces.js";

/**
 * The operator console's sign-in: an API key with ledger:read is exchanged for a random session
 * secret in an HttpOnly, SameSite=Strict cookie; the store keeps only the secret's SHA-256, so the key
 * never reaches the browser's storage and a database copy holds nothing that signs in. The cookie
 * authenticates GET requests to the read endpoints, and one write, resolving a quarantined
 * observation, only from the console's own page (consoleCaller); never verify, challenge or feedback.
 * Signing out deletes the session, so a copied cookie stops working at once; a revoked key's sessions
 * stop with it.
 */
export const CONSOLE_COOKIE = "warden_console";
export const CONSOLE_SCOPE: Scope = "ledger:read";
/** Sent by the console's own scripts on the state-changing call; a cross-site form cannot set it. */
export const CONSOLE_HEADER = "x-warden-console";

const sessionHash = (secret: string): string => createHash("sha256").update(secret).digest("hex");
const WELL_FORMED_SECRET = /^[A-Za-z0-9_-]{43}$/;

export const ConsoleSessionView = Type.Object({
  tenantId: Type.String(),
  keyId: Type.String(),
  /** The key's scopes: the console offers resolving quarantined observations only with ledger:write. */
  scopes: Type.Array(Type.String()),
  expiresAt: Type.String({ format: "date-time" }),
});

const SignIn = Type.Object(
  { apiKey: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);

/**
 * The live session a console cookie names, or undefined when the request carries no cookie. A cookie
 * that names no live session (expired, signed out, its key revoked) is 401 console_session_required.
 */
async function liveSession(store: Store, clock: () => number, request: FastifyRequest) {
  const secret = request.cookies[CONSOLE_COOKIE];
  if (secret === undefined) return undefined;
  if (!WELL_FORMED_SECRET.test(secret)) throw new ApiError("console_session_required");
  const found = await store.consoleSessions.find(sessionHash(secret), clock());
  if (!found || found.key.revokedAt !== null) throw new ApiError("console_session_required");
  return found;
}

/**
 * The caller a console cookie stands for (the read routes' second way in; http/auth.ts). For a write
 * (`write`), the request must come from the console's page (fromOwnOrigin) and carry the
 * x-warden-console header, which a cross-site form cannot send (403 forbidden_origin otherwise).
 */
export async function consoleCaller(
  store: Store,
  clock: () => number,
  request: FastifyRequest,
  options: { write?: boolean } = {},
): Promise<Caller | undefined> {
  if (
    options.write &&
    request.cookies[CONSOLE_COOKIE] !== undefined &&
    (!fromOwnOrigin(request) || request.headers[CONSOLE_HEADER] !== "1")
  ) {
    throw new ApiError("forbidden_origin");
  }
  const found = await liveSession(store, clock, request);
  return found && { key: found.key, tenant: found.tenant };
}

/**
 * Whether a state-changing console request (sign-in, sign-out, a resolution by cookie) comes from a
 * page of this host: the second of three CSRF defences, with SameSite=Strict and the JSON-only body.
 * Browsers send Origin on every POST and DELETE, same-origin ones included (Fetch standard); where a
 * privacy setting or a proxy drops it, Sec-Fetch-Site: same-origin, which no page can forge, stands
 * in. A request with neither cannot be told from a cross-site one and is refused, as is one whose
 * Sec-Fetch-Site names another origin.
 */
function fromOwnOrigin(request: FastifyRequest): boolean {
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin") return false;
  const origin = request.headers.origin;
  if (origin === undefined) return site === "same-origin";
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

export function registerConsoleSession(
  app: FastifyInstance,
  deps: { store: Store; clock: () => number; sessionHours: number; signInsPerMinute: number },
): void {
  const { store, clock } = deps;
  const signInLimit = { max: deps.signInsPerMinute, windowSeconds: 60 };
  const settings = { scope: CONSOLE_SCOPE, operation: "console", onStoreFault: "store_unavailable" as const };
  const cookieOptions = (request: FastifyRequest) => ({
    path: "/",
    httpOnly: true,
    sameSite: "strict" as const,
    secure: request.protocol === "https",
  });
  const view = (s: { tenantId: string; keyId: string; expiresAt: number }, scopes: readonly Scope[]) => ({
    tenantId: s.tenantId,
    keyId: s.keyId,
    scopes: [...scopes],
    expiresAt: new Date(s.expiresAt).toISOString(),
  });
  const refuseCrossSite = (request: FastifyRequest) => {
    if (!fromOwnOrigin(request)) throw new ApiError("forbidden_origin");
  };

  app.post<{ Body: { apiKey: string } }>(
    "/console/session",
    {
      config: { warden: settings },
      schema: {
        summary: "Sign in to the operator console with an API key that has ledger:read",
        tags: ["console"],
        body: SignIn,
        response: { 200: ConsoleSessionView, "4xx": ErrorResponse, "5xx": ErrorResponse },
      },
    },
    async (request, reply) => {
      refuseCrossSite(request);
      // Counted before the key is read, per client (an IPv4 address, an IPv6 /64: clientSource), so
      // guesses and session floods from one place stop at WARDEN_CONSOLE_SIGNINS_PER_MINUTE, whether
      // the keys are good or not, however many addresses of its /64 a client takes.
      const now = clock();
      const [reading] = await store.patient.counters.hit(
        [rateLimitHit(signInLimit, `console:${sha256Hex(clientSource(request.ip))}`, "sign_in")],
        now,
      );
      applyRateLimit(reply, rateLimitState(signInLimit, reading, now));
      const { apiKey } = request.body;
      if (!isWellFormedApiKey(apiKey)) throw new ApiError("invalid_api_key");
      const found = await store.patient.apiKeys.findByHash(hashApiKey(apiKey));
      if (!found || found.key.revokedAt !== null) throw new ApiError("invalid_api_key");
      if (!found.key.scopes.includes(CONSOLE_SCOPE)) {
        throw new ApiError("insufficient_scope", `This API key lacks the ${CONSOLE_SCOPE} scope.`);
      }
      const secret = randomBytes(32).toString("base64url");
      const session = {
        idHash: sessionHash(secret),
        tenantId: found.tenant.id,
        keyId: found.key.id,
        createdAt: now,
        expiresAt: now + deps.sessionHours * 3_600_000,
      };
      await store.consoleSessions.create(session);
      reply.setCookie(CONSOLE_COOKIE, secret, {
        ...cookieOptions(request),
        maxAge: deps.sessionHours * 3600,
      });
      reply.header("cache-control", "no-store");
      return view(session, found.key.scopes);
    },
  );

  app.get(
    "/console/session",
    {
      config: { warden: settings },
      schema: {
        summary: "The console session the cookie stands for",
        tags: ["console"],
        response: { 200: ConsoleSessionView, "4xx": ErrorResponse, "5xx": ErrorResponse },
      },
    },
    async (request, reply) => {
      const found = await liveSession(store, clock, request);
      if (!found) throw new ApiError("console_session_required");
      reply.header("cache-control", "no-store");
      return view(found.session, found.key.scopes);
    },
  );

  app.delete(
    "/console/session",
    {
      config: { warden: settings },
      schema: {
        summary: "Sign out of the operator console: the session ends at once",
        tags: ["console"],
        response: { 204: Type.Null(), "4xx": ErrorResponse, "5xx": ErrorResponse },
      },
    },
    async (request, reply) => {
      refuseCrossSite(request);
      if (request.headers[CONSOLE_HEADER] !== "1") throw new ApiError("forbidden_origin");
      const secret = request.cookies[CONSOLE_COOKIE];
      if (secret !== undefined && WELL_FORMED_SECRET.test(secret)) {
        await store.consoleSessions.delete(sessionHash(secret));
      }
      reply.clearCookie(CONSOLE_COOKIE, cookieOptions(request));
      return reply.code(204).send();
    },
  );
}
