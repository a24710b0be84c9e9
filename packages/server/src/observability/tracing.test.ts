import http from "node:http";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../config.js";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../testing/harness.js";
import { Tracing } from "./tracing.js";

const EMAIL = "someone.traced@example.com";
const IP = "203.0.113.77";
const USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) TracedBrowser/1.0";
const SUBJECT = { email: EMAIL, ip: IP, userAgent: USER_AGENT, accountId: "acct-traced-42" };

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function tracedApp(options: Parameters<typeof makeTestApp>[0] = {}) {
  const exporter = new InMemorySpanExporter();
  t = await makeTestApp({
    ...options,
    env: { OTEL_TRACES_EXPORTER: "otlp", ...options.env },
    traceExporter: exporter,
  });
  await t.tenant("acme", { rawPii: true });
  const { apiKey } = await t.key("acme");
  const spans = async (): Promise<ReadableSpan[]> => {
    await t?.deps.tracing?.flush();
    return exporter.getFinishedSpans();
  };
  return { app: t, apiKey, spans };
}

const verify = (app: TestApp, apiKey: string, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: { ...bearer(apiKey), ...headers },
    payload: { action: "signup", session: "sess-traced-1", subject: SUBJECT },
  });

const isChildOf = (span: ReadableSpan, parent: ReadableSpan) =>
  span.spanContext().traceId === parent.spanContext().traceId &&
  span.parentSpanContext?.spanId === parent.spanContext().spanId;

describe("OpenTelemetry traces", () => {
  it("with traces on, a verify is one server span, and every store call it made is a child span of it", async () => {
    const { app, apiKey, spans } = await tracedApp();
    const res = await verify(app, apiKey);
    expect(res.statusCode).toBe(200);
    const verdict = res.json() as { decision: string; degraded: boolean };

    const all = await spans();
    // The start-up rehearsal's verifies (app.warmUp) are not traced: this is the only server span.
    const servers = all.filter((s) => s.kind === SpanKind.SERVER);
    expect(servers.map((s) => s.name)).toEqual(["POST /v1/verify"]);
    const server = servers[0] as ReadableSpan;
    expect(server.parentSpanContext).toBeUndefined();
    expect(server.attributes).toEqual({
      "http.request.method": "POST",
      "http.route": "/v1/verify",
      "http.response.status_code": 200,
      "warden.tenant_id": "acme",
      "warden.decision": verdict.decision,
      "warden.degraded": false,
    });
    expect(server.status.code).toBe(SpanStatusCode.UNSET);

    const children = all.filter((s) => s !== server);
    expect(children.length).toBeGreaterThanOrEqual(3);
    for (const child of children) {
      expect(isChildOf(child, server), child.name).toBe(true);
      expect(child.kind).toBe(SpanKind.INTERNAL);
      expect(child.name).toBe(`store ${child.attributes["warden.store.call"]}`);
      // Children start and end within their request's span.
      expect(child.startTime[0] * 1e9 + child.startTime[1]).toBeGreaterThanOrEqual(
        server.startTime[0] * 1e9 + server.startTime[1],
      );
    }
    const names = children.map((s) => s.name);
    // Authentication (an onRequest hook, before the body is read) and the event written after it.
    expect(names).toContain("store apiKeys.findByHash");
    expect(names).toContain("store events.record");
  });

  it("a body that arrives after the headers keeps the handler's store calls under the request's span", async () => {
    const { app, apiKey, spans } = await tracedApp();
    const url = new URL(await app.app.listen({ host: "127.0.0.1", port: 0 }));
    const body = JSON.stringify({ action: "signup", subject: { userAgent: "curl/8.5.0" } });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: "/v1/verify",
          method: "POST",
          headers: { ...bearer(apiKey), "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on("error", reject);
      req.flushHeaders();
      setTimeout(() => req.end(body), 100);
    });
    expect(status).toBe(200);
    const all = await spans();
    const server = all.find((s) => s.kind === SpanKind.SERVER) as ReadableSpan;
    expect(all.map((s) => s.name)).toContain("store events.record");
    for (const child of all.filter((s) => s !== server))
      expect(isChildOf(child, server), child.name).toBe(true);
  });

  it("no span holds personal data: no email, address, user agent, account, session or key", async () => {
    const { app, apiKey, spans } = await tracedApp();
    await verify(app, apiKey);
    const text = JSON.stringify(
      (await spans()).map((s) => [s.name, s.attributes, s.events, s.resource.attributes]),
    );
    for (const secret of [EMAIL, IP, "203.0.113", USER_AGENT, "acct-traced-42", "sess-traced-1", apiKey])
      expect(text).not.toContain(secret);
  });

  it("a request with a W3C traceparent gets a server span in the caller's trace, under the caller's span", async () => {
    const { app, apiKey, spans } = await tracedApp();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    await verify(app, apiKey, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    const server = (await spans()).find((s) => s.kind === SpanKind.SERVER);
    expect(server?.spanContext().traceId).toBe(traceId);
    expect(server?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
  });

  it("a store call that fails is an error span naming the error's kind, never its message; verify answers degraded", async () => {
    const { app, apiKey, spans } = await tracedApp({
      wrapStore: (store) =>
        faultyStore(store, {
          failing: new Set(["counters"]),
          error: () => new Error(`no such row ${EMAIL}`),
        }),
    });
    const res = await verify(app, apiKey);
    expect(res.statusCode).toBe(200);
    expect((res.json() as { degraded: boolean }).degraded).toBe(true);
    const all = await spans();
    const server = all.find((s) => s.kind === SpanKind.SERVER) as ReadableSpan;
    expect(server.attributes["warden.degraded"]).toBe(true);
    const failed = all.filter((s) => s.status.code === SpanStatusCode.ERROR);
    expect(failed.length).toBeGreaterThan(0);
    for (const span of failed) {
      expect(span.name).toMatch(/^store counters\./);
      expect(isChildOf(span, server)).toBe(true);
      expect(span.attributes["error.type"]).toBe("Error");
    }
    expect(JSON.stringify(all.map((s) => [s.attributes, s.status, s.events]))).not.toContain(EMAIL);
  });

  it("a 404 is a server span named after its method alone (no route), with its status and no error", async () => {
    const { app, spans } = await tracedApp();
    await app.app.inject({ method: "GET", url: "/no/such/route?email=someone@example.com" });
    const [server] = (await spans()).filter((s) => s.kind === SpanKind.SERVER);
    expect(server?.name).toBe("GET");
    expect(server?.attributes).toEqual({ "http.request.method": "GET", "http.response.status_code": 404 });
    expect(server?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("calls outside a request (housekeeping, refreshes) make no span", async () => {
    const { app, spans } = await tracedApp();
    await app.deps.store.policies.current("acme");
    await app.deps.store.ping();
    expect(await spans()).toEqual([]);
  });

  it("with traces off (the default), no tracer, no exporter, the store unwrapped, and no span of any request", async () => {
    const exporter = new InMemorySpanExporter();
    t = await makeTestApp({ traceExporter: exporter });
    await t.tenant("acme", { rawPii: true });
    const { apiKey } = await t.key("acme");
    expect(t.deps.tracing).toBeUndefined();
    expect(t.deps.store).toBe(t.store);
    expect((await verify(t, apiKey)).statusCode).toBe(200);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("a collector that refuses exports is reported once, not once per batch", async () => {
    const refusing: SpanExporter = {
      export: (_spans, done) =>
        done({ code: ExportResultCode.FAILED, error: new Error("connect ECONNREFUSED") }),
      shutdown: async () => undefined,
    };
    const config = loadConfig({ OTEL_TRACES_EXPORTER: "otlp" }).tracing;
    if (config === undefined) throw new Error("traces should be on");
    const tracing = new Tracing(config, { exporter: refusing });
    const reports: string[] = [];
    tracing.report = (_err, what) => reports.push(what);
    for (let batch = 0; batch < 3; batch++) {
      tracing.tracer.startSpan(`span ${batch}`).end();
      // A flush rejects with the export's failure (requests never wait for one).
      await tracing.flush().catch(() => undefined);
    }
    expect(reports).toEqual(["trace export failed (1 batches since the last report)"]);
    await tracing.shutdown();
  });
});
