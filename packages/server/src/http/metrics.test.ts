import { afterAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../store/interfaces.js";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../testing/harness.js";

let t: TestApp | undefined;
afterAll(() => t?.close());

describe("GET /metrics", () => {
  it("counts requests by route template, verdicts by decision and degraded, and times store calls", async () => {
    const failing = new Set<string>();
    t = await makeTestApp({
      wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("down") }),
    });
    await t.tenant("acme");
    const { apiKey } = await t.key("acme");
    const verify = () =>
      (t as TestApp).app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(apiKey),
        payload: {
          action: "signup",
          session: "s",
          subject: { userAgent: "curl/8.5.0", ipTrunc: "192.0.2.0/24" },
        },
      });
    expect((await verify()).json().decision).toBe("challenge");
    failing.add("counters.hit");
    expect((await verify()).json().degraded).toBe(true);
    failing.clear();
    await t.app.inject({ method: "POST", url: "/v1/verify", payload: {} });
    await t.app.inject({ method: "GET", url: `/v1/events/evt_whatever`, headers: bearer(apiKey) });

    const res = await t.app.inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toMatch(
      /warden_verify_decisions_total\{decision="challenge",degraded="false",enforcement_mode="enforce",challenge_cleared="false"\} 1/,
    );
    expect(text).toMatch(
      /warden_verify_decisions_total\{decision="challenge",degraded="true",enforcement_mode="enforce",challenge_cleared="false"\} 1/,
    );
    expect(text).toMatch(/warden_http_requests_total\{route="\/v1\/verify",method="POST",status="200"\} 2/);
    expect(text).toMatch(/warden_http_requests_total\{route="\/v1\/verify",method="POST",status="401"\} 1/);
    // Route templates, not raw paths: cardinality stays bounded.
    expect(text).toMatch(/route="\/v1\/events\/:eventId"/);
    expect(text).not.toContain("evt_whatever");
    expect(text).toMatch(
      /warden_store_call_duration_seconds_count\{call="events\.record",outcome="ok"\} [1-9]/,
    );
    expect(text).toMatch(
      /warden_store_call_duration_seconds_count\{call="counters\.hit",outcome="error"\} 1/,
    );
    expect(text).toMatch(/warden_http_request_duration_seconds_bucket/);
    expect(text).toMatch(/warden_process_cpu_user_seconds_total/);
    expect(text).toMatch(/warden_nodejs_eventloop_lag_p99_seconds/);
    // Aggregates only: no tenant or key appears.
    expect(text).not.toContain("acme");
    expect(text).not.toContain(apiKey);
  });
});
