import { Writable } from "node:stream";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { buildApp, loggerOptions } from "../app.js";
import { bearer, makeTestApp, type TestApp } from "../testing/harness.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The JSON lines an app built on the test app's deps writes at info while `run` drives it. */
async function linesAtInfo(app: TestApp, run: (a: Awaited<ReturnType<typeof buildApp>>) => Promise<unknown>) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const logging = await buildApp(app.deps, {
    logger: { ...(loggerOptions("info") as object), stream: sink } as never,
  });
  try {
    await run(logging);
  } finally {
    await logging.close();
  }
  return lines;
}

describe("request log", () => {
  it.each([
    ["off", {}],
    ["on", { OTEL_TRACES_EXPORTER: "otlp" }],
  ])("one line per request at info: a verify writes exactly one line (traces %s)", async (_traces, env) => {
    const exporter = new InMemorySpanExporter();
    t = await makeTestApp({ env, traceExporter: exporter });
    await t.tenant("acme");
    const { apiKey } = await t.key("acme");
    const lines = await linesAtInfo(t, (app) =>
      app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: { ...bearer(apiKey), "x-request-id": "req-verify-log" },
        payload: { action: "signup", subject: { userAgent: "curl/8.5.0" } },
      }),
    );
    const mine = lines.filter((l) => l.reqId === "req-verify-log");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 30,
      msg: "request completed",
      req: { method: "POST", url: "/v1/verify" },
      res: { statusCode: 200 },
    });
    if (t.deps.tracing) {
      // With traces on, the line names the request's trace, to find its spans from the log.
      await t.deps.tracing.flush();
      const server = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
      expect(mine[0]?.traceId).toBe(server?.spanContext().traceId);
    } else {
      expect(mine[0]).not.toHaveProperty("traceId");
    }
  });
});
