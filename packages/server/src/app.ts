import { randomUUID } from "node:crypto";
import cookie from "@fastify/cookie";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from "fastify";
import { registerConsoleAssets } from "./console/assets.js";
import { registerConsoleSession } from "./console/session.js";
import type { Deps } from "./deps.js";
import { guardAdminHosts } from "./http/adminHosts.js";
import { keepAdminPathsOffPublic } from "./http/adminListener.js";
import { authenticator, KnownCallers } from "./http/auth.js";
import { guardConnections } from "./http/connectionGuard.js";
import {
  clientErrorHandler,
  errorHandler,
  expectationFailed,
  frameworkError,
  notFoundHandler,
} from "./http/errorHandler.js";
import { registerHealth } from "./http/healthRoutes.js";
import { registerJsonBody } from "./http/jsonBody.js";
import { createMetrics } from "./http/metrics.js";
import { dropNullOptionals } from "./http/optionalNulls.js";
import { refuseNulInQuery } from "./http/queryText.js";
import { rateLimiter } from "./http/rateLimit.js";
import { warmUp } from "./http/warmUp.js";
import { traceRequests, withVerdictOnSpan } from "./observability/requestSpans.js";
import { METHODS } from "./operations/challenge/methods/registry.js";
import { registerChallenge } from "./operations/challenge/route.js";
import { registerFeedback } from "./operations/feedback/route.js";
import { registerInsights } from "./operations/insights/route.js";
import { registerPageTokens } from "./operations/page/route.js";
import { registerPolicy } from "./operations/policy/route.js";
import { ClearsInFlight } from "./operations/verify/clearsInFlight.js";
import { KeysInFlight } from "./operations/verify/keysInFlight.js";
import { rehearsalDeps } from "./operations/verify/rehearsal.js";
import { registerVerify } from "./operations/verify/route.js";
import type { VerifyRequest } from "./operations/verify/schema.js";
import { degradedVerdict, type VerifyDeps } from "./operations/verify/verify.js";
import { registerJwks } from "./tokens/jwksRoute.js";

type LoggerSetting = NonNullable<FastifyServerOptions["logger"]>;

export interface AppOptions {
  logger?: LoggerSetting;
}

/**
 * Pino settings: the request id once on every line (Fastify's `reqId`); never the Authorization
 * header, request bodies or query strings (a key or an address put in a URL is not logged).
 */
export function loggerOptions(level: string): LoggerSetting {
  return {
    level,
    redact: ["req.headers.authorization", "req.headers.cookie"],
    serializers: {
      req: (req: { method: string; url: string }) => ({
        method: req.method,
        url: withoutQuery(req.url),
      }),
    },
  };
}

const withoutQuery = (url: string): string => {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
};

/** A caller's X-Request-Id is kept only when it is short and printable; otherwise Warden makes one. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;
/** How long a page token request trusts this process's last store check of its key (docs/api.md). */
export const PAGE_TOKEN_KEY_CHECK_MS = 10_000;
function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Builds the app from its dependencies; every route is registered in the list below. */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config, keyring, model, clock, tenantPolicies, agents, hosting, pendingEvents } = deps;
  const metrics = createMetrics(pendingEvents, deps.store);
  deps.worker?.shareMetrics(metrics.registry);
  const store = metrics.timed(deps.store);
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    bodyLimit: config.bodyLimitBytes,
    // A client cannot hold a socket by trickling its request (slow headers or body): cut after the
    // timeouts below; Node checks them every second instead of its default 30.
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.idleTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    requestIdHeader: false,
    genReqId: requestId,
    // Only the configured proxies' forwarded headers count (client address, protocol).
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    // What fails before a route runs (the router, Node's HTTP parser) answers the Error schema too.
    frameworkErrors: frameworkError,
    clientErrorHandler,
    // One line per request (below), not Fastify's two ("incoming request", "request completed").
    logController: new LogController({ disableRequestLogging: true }),
  });
  // First of all hooks, so authentication's store calls are in the request's span.
  if (deps.tracing) traceRequests(app, deps.tracing);
  app.addHook("onResponse", async (request, reply) => {
    request.log.info(
      { req: request.raw, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      "request completed",
    );
  });
  if (config.adminPort !== undefined) keepAdminPathsOffPublic(app);
  guardAdminHosts(app, config.adminHosts);
  guardConnections(app.server, config);
  metrics.instrument(app);
  // Only JSON bodies are accepted: everything else is 415 unsupported_media_type (docs/api.md#errors).
  app.removeContentTypeParser(["text/plain"]);
  registerJsonBody(app);
  app.decorateRequest("bodyFrom", 0);
  app.decorateRequest("bodyWaitMs", 0);
  app.addHook("preParsing", async (request) => {
    request.bodyFrom = performance.now();
  });
  app.addHook("preValidation", async (request) => {
    if (request.bodyFrom > 0) request.bodyWaitMs = performance.now() - request.bodyFrom;
    dropNullOptionals(request.routeOptions.schema?.body, request.body);
    refuseNulInQuery(request.query, request.params);
  });
  app.server.on("checkExpectation", expectationFailed);
  app.decorateRequest("caller", null);
  app.decorateRequest("storeFault", false);
  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id);
    // Verdicts, ledger and console data are per caller (a Bearer key or a console cookie, neither in
    // the URL): no shared cache may keep them, nor a browser's for the next user of the machine.
    if (request.url.startsWith("/v1/") && !reply.hasHeader("cache-control"))
      reply.header("cache-control", "private, no-store");
  });

  await app.register(swagger, {
    openapi: {
      info: {
        title: "Warden abuse-decision API",
        version: "1.0.0",
        description:
          "Warden implements the abuse-decision service specification. Errors use { error, message, code }.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key" } } },
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  await app.register(cookie);

  const warn = (err: unknown, what: string) => app.log.warn({ err }, what);
  agents.report = warn;
  tenantPolicies.report = warn;
  pendingEvents.report = warn;
  if (deps.tracing) deps.tracing.report = warn;
  const onVerdict = withVerdictOnSpan(metrics.verdict, deps.tracing);
  const verifyDeps: VerifyDeps = {
    store,
    keyring,
    model,
    tenantPolicies,
    pendingEvents,
    hosting,
    agentKeys: agents.lookup,
    clock,
    tokens: {
      issuer: config.tokenIssuer,
      audience: config.tokenAudience,
      ttlSeconds: config.tokenTtlSeconds,
    },
    deadlineMs: config.verifyDeadlineMs,
    rateLimit: { max: config.rateLimitMax, windowSeconds: config.rateLimitWindowSeconds },
    idempotencyTtlMs: config.idempotencyTtlHours * 3_600_000,
    clearWindowMs: config.clearWindowSeconds * 1000,
    keysInFlight: new KeysInFlight(),
    clearsInFlight: new ClearsInFlight(),
    report: warn,
  };
  const callers = new KnownCallers(10_000, clock);
  // Routes whose settings say so (the read routes) also accept the console's session cookie on GET.
  // These routes are off verify's path: their key lookup and count may wait for a busy database.
  const onRequest = [
    authenticator(store, callers, { clock, patient: true }),
    rateLimiter(store.patient.counters, verifyDeps.rateLimit, clock),
  ];

  app.setErrorHandler(
    errorHandler(async (request) => {
      const verdict = degradedVerdict(
        verifyDeps,
        request.caller ?? undefined,
        request.body as Partial<VerifyRequest> | undefined,
      );
      onVerdict(verdict);
      return verdict;
    }),
  );
  app.setNotFoundHandler(notFoundHandler);

  registerHealth(app, store, metrics.recent);
  registerJwks(app, keyring);
  // Verify counts its rate limit with its velocity counters, in one store call.
  registerVerify(app, verifyDeps, {
    onRequest: [authenticator(store, callers, { fromMemory: true })],
    onVerdict,
    onKeyRevoked: (keyId) => callers.forgetKey(keyId),
    // Only the start-up rehearsal's caller, which exists in memory while app.warmUp() runs, gets these.
    rehearsal: rehearsalDeps({ ...verifyDeps, store: deps.store }),
  });
  app.decorate("warmUp", async () => {
    // The rehearsal's requests are not the service's traffic: neither counted nor traced.
    if (deps.tracing) deps.tracing.recording = false;
    try {
      const report = await warmUp(app, deps.store, callers, clock);
      metrics.resetRequests();
      return report;
    } finally {
      if (deps.tracing) deps.tracing.recording = true;
    }
  });
  registerChallenge(
    app,
    {
      store,
      clock,
      ttlMs: config.challengeTtlSeconds * 1000,
      payment: { apiBase: config.paymentApiBase, timeoutMs: config.paymentTimeoutMs },
      tenantPolicies,
      agentKeys: agents.lookup,
      signatureSkewSeconds: model.signatureSkewSeconds,
      methods: METHODS,
    },
    { onRequest },
  );
  // Page tokens cost an HMAC and no store write: authenticated from memory, the key checked again in
  // the background once its last check is PAGE_TOKEN_KEY_CHECK_MS old (they write nothing a
  // revocation could refuse), and not counted against the key's rate limit (a page load is not an attempt).
  registerPageTokens(
    app,
    { keyring, clock, ttlMs: model.pageTokenTtlMs, tenantPolicies },
    {
      onRequest: [authenticator(store, callers, { fromMemory: { forMs: PAGE_TOKEN_KEY_CHECK_MS } })],
    },
  );
  registerFeedback(app, { store, clock, idempotencyTtlMs: verifyDeps.idempotencyTtlMs }, { onRequest });
  registerPolicy(app, { store, clock, tenantPolicies }, { onRequest });
  registerInsights(
    app,
    {
      store,
      clock,
      tokens: verifyDeps.tokens,
      model,
      // Under `warden serve --workers N` each worker holds 1/N of a key's read budget: a key's
      // readers spread over the workers together get the budget the settings state, not N of them.
      readRowsPerMinute: Math.max(1, Math.floor(config.readRowsPerMinute / config.workers)),
      readStoreMsPerMinute: (config.readStoreSecondsPerMinute * 1000) / config.workers,
    },
    { onRequest },
  );
  registerConsoleSession(app, {
    store,
    clock,
    sessionHours: config.consoleSessionHours,
    signInsPerMinute: config.consoleSignInsPerMinute,
  });
  await registerConsoleAssets(app);
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  app.get(
    "/metrics",
    { schema: { summary: "Prometheus metrics (aggregates only; no tenant labels)", tags: ["health"] } },
    async (_request, reply) => {
      reply.header("content-type", metrics.registry.contentType);
      return deps.worker ? deps.worker.clusterMetrics() : metrics.registry.metrics();
    },
  );

  return app;
}
