import { afterEach, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../testing/harness.js";
import { type OtlpReceiver, startOtlpReceiver } from "../testing/otlpReceiver.js";

const EMAIL = "exported.someone@example.com";
const IP = "198.51.100.23";
const SERVER = 2;
const INTERNAL = 1;

let receiver: OtlpReceiver | undefined;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  await receiver?.close();
  t = undefined;
  receiver = undefined;
});

/** A verify over a real socket (the body arrives in the socket's events, as in production). */
async function verifyOverHttp(app: TestApp): Promise<Response> {
  await app.tenant("acme", { rawPii: true });
  const { apiKey } = await app.key("acme");
  const url = await app.app.listen({ host: "127.0.0.1", port: 0 });
  return fetch(`${url}/v1/verify`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ action: "signup", subject: { email: EMAIL, ip: IP, userAgent: "curl/8.5.0" } }),
  });
}

describe("OTLP/HTTP export", () => {
  it.each(["http/protobuf", "http/json"])(
    "over %s, a verify's spans reach the collector on graceful shutdown: one server span, its store calls as children, no personal data",
    async (protocol) => {
      receiver = await startOtlpReceiver();
      t = await makeTestApp({
        env: {
          OTEL_TRACES_EXPORTER: "otlp",
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20collector-token",
          OTEL_SERVICE_NAME: "warden-test",
        },
      });
      const res = await verifyOverHttp(t);
      expect(res.status).toBe(200);
      const verdict = (await res.json()) as { decision: string };
      // Spans wait in the batch (5 s); closing the app, as SIGTERM does, sends them.
      expect(receiver.exports).toEqual([]);
      await t.close();
      t = undefined;

      expect(receiver.exports.length).toBeGreaterThan(0);
      for (const e of receiver.exports) {
        expect(e.path).toBe("/v1/traces");
        expect(e.contentType).toBe(protocol === "http/json" ? "application/json" : "application/x-protobuf");
        expect(e.headers.authorization).toBe("Bearer collector-token");
      }
      const spans = receiver.exports.flatMap((e) => e.spans);
      const servers = spans.filter((s) => s.kind === SERVER);
      expect(servers).toHaveLength(1);
      const server = servers[0];
      expect(server).toMatchObject({
        name: "POST /v1/verify",
        parentSpanId: "",
        attributes: {
          "http.request.method": "POST",
          "http.route": "/v1/verify",
          "http.response.status_code": 200,
          "warden.tenant_id": "acme",
          "warden.decision": verdict.decision,
          "warden.degraded": false,
        },
        resource: { "service.name": "warden-test" },
      });
      const children = spans.filter((s) => s !== server);
      expect(children.map((s) => s.name)).toEqual(expect.arrayContaining(["store events.record"]));
      for (const child of children) {
        expect(child).toMatchObject({
          traceId: server?.traceId,
          parentSpanId: server?.spanId,
          kind: INTERNAL,
        });
        expect(child.name).toMatch(/^store [a-zA-Z]+\.[a-zA-Z]+$/);
      }
      const text = JSON.stringify(spans);
      for (const secret of [EMAIL, IP, "curl/8.5.0"]) expect(text).not.toContain(secret);
    },
  );

  it("off by default: with a collector's endpoint set but OTEL_TRACES_EXPORTER unset, nothing is sent", async () => {
    receiver = await startOtlpReceiver();
    t = await makeTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    expect(t.deps.tracing).toBeUndefined();
    expect((await verifyOverHttp(t)).status).toBe(200);
    await t.close();
    t = undefined;
    expect(receiver.exports).toEqual([]);
  });
});
