import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, loggerOptions } from "../app.js";
import { bearer, expectError, makeTestApp, type TestApp, windowStartClock } from "../testing/harness.js";
import { inspectJson, JSON_LIMITS } from "./jsonBody.js";

/** Hostile input is a 4xx with a stable code, decided before any work: never the degraded answer. */

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

const nested = (levels: number, leaf: unknown): unknown => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};
/** JSON text of `levels` nested arrays, 2 bytes a level (JSON.stringify itself would overflow the stack). */
const nestedText = (levels: number): string => `${"[".repeat(levels)}${"]".repeat(levels)}`;
/** A body as raw JSON text (lone surrogates survive only as escapes). */
const raw = (url: string, text: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: "POST", url, headers: { ...bearer(key), ...headers }, payload: text });
const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  raw(url, JSON.stringify(payload), headers);

describe("hostile bodies are refused before any work", () => {
  it("formData nested 15,000 levels deep → 400 nesting_too_deep, not a degraded challenge", async () => {
    const res = await raw(
      "/v1/verify",
      `{"action":"signup","session":"deep","subject":{"ipTrunc":"198.51.100.0/24","formData":${nestedText(15_000)}}}`,
    );
    expectError(res, 400, "nesting_too_deep");
    expect(res.json().message).toMatch(/^subject\.formData(\.0)+: nests deeper than 32 levels\.$/);
  });

  it("10,000 levels anywhere with an Idempotency-Key → 400 nesting_too_deep (fingerprinting never runs)", async () => {
    const res = await raw(
      "/v1/verify",
      `{"action":"signup","subject":{},"context":{"meta":${nestedText(10_000)}}}`,
      { "idempotency-key": "deep-1" },
    );
    expectError(res, 400, "nesting_too_deep");
  });

  it("32 levels are accepted; 33 are refused", async () => {
    // body (1) → subject (2) → formData (3) → … : a container at level 32 is the deepest allowed.
    const ok = await post("/v1/verify", { action: "signup", subject: { formData: nested(29, {}) } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().degraded).toBe(false);
    expectError(
      await post("/v1/verify", { action: "signup", subject: { formData: nested(30, {}) } }),
      400,
      "nesting_too_deep",
    );
  });

  it.each([
    ["/v1/verify", '{"action":"signup","subject":{"userAgent":"a\\ud800b"}}'],
    ["/v1/verify", '{"action":"sign\\ud800up","subject":{}}'],
    ["/v1/verify", '{"action":"signup","subject":{"formData":{"\\udc00":"x"}}}'],
    ["/v1/feedback", '{"eventId":"evt_x","outcome":"converted","source":"\\ud800"}'],
    ["/v1/challenge", '{"eventId":"evt_x","session":"s\\udfff"}'],
  ])("a lone surrogate on %s → 400 invalid_string (%s)", async (url, text) => {
    expectError(await raw(url, text, { "idempotency-key": `sur-${text.length}` }), 400, "invalid_string");
  });

  it.each([
    ["/v1/verify", { action: "sign\u0000up", subject: {} }],
    ["/v1/verify", { action: "signup", session: "s\u0000", subject: {} }],
    ["/v1/challenge", { eventId: "evt_\u0000", session: "s" }],
    ["/v1/challenge", { challengeId: "chl_x", session: "s", proof: { nonce: "\u0000" } }],
    ["/v1/feedback", { eventId: "evt_\u0000", outcome: "converted" }],
  ])("a NUL byte on %s → 400 invalid_string", async (url, payload) => {
    expectError(await post(url, payload), 400, "invalid_string");
  });

  it.each([
    ["/v1/verify", '{"action":"signup","session":"s","subject":{"formData":1e999}}'],
    ["/v1/verify", '{"action":"signup","subject":{},"context":{"x":1e999}}'],
    ["/v1/verify", '{"action":"signup","subject":{"formDataHashed":[-1e999]}}'],
    ["/v1/verify", '{"action":"signup","subject":{},"context":{"decisionCosts":{"falseAllow":1e400}}}'],
    ["/v1/feedback", '{"eventId":"evt_x","outcome":"converted","value":1e999}'],
    ["/v1/feedback", '{"eventId":"evt_x","outcome":"converted","extra":[-1e999]}'],
    ["/v1/challenge", '{"eventId":"evt_x","session":"s","context":{"n":1e999}}'],
    ["/v1/challenge", '{"challengeId":"chl_x","session":"s","proof":{"nonce":1e999}}'],
  ])(
    "a number overflowing to Infinity on %s, with an Idempotency-Key → 400 invalid_number (%s)",
    async (url, text) => {
      const res = await raw(url, text, { "idempotency-key": `inf-${text.length}-${url}` });
      expectError(res, 400, "invalid_number");
      expect(res.json().message).toMatch(/^[\w.]+: is a number too large to represent/);
    },
  );

  it("1e999 in formData is refused with a 400 before verify runs: no degraded answer, no event", async () => {
    const res = await raw(
      "/v1/verify",
      '{"action":"signup","session":"inf-event","subject":{"userAgent":"curl/8.5.0","formData":1e999}}',
      { "idempotency-key": "inf-event" },
    );
    expectError(res, 400, "invalid_number");
    expect(res.json().message).toBe(
      "subject.formData: is a number too large to represent (it overflows to Infinity).",
    );
    // The same request with a finite number is scored normally under the same key.
    const ok = await raw(
      "/v1/verify",
      '{"action":"signup","session":"inf-event","subject":{"userAgent":"curl/8.5.0","formData":1e308}}',
      { "idempotency-key": "inf-event" },
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json().degraded).toBe(false);
  });

  it("oversize strings, arrays and bodies with too many values are refused with their codes", async () => {
    expectError(
      await post("/v1/verify", { action: "signup", subject: { formData: { text: "x".repeat(16_385) } } }),
      400,
      "string_too_long",
    );
    expectError(
      await post("/v1/verify", { action: "signup", subject: { formData: Array(1_001).fill(0) } }),
      400,
      "body_too_complex",
    );
    const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, Array(900).fill(0)]));
    expectError(
      await post("/v1/verify", { action: "signup", subject: { formData: many } }),
      400,
      "body_too_complex",
    );
  });

  it("subject.headers: more than 64, a name that is not a header name, or an array of more than 16 → 400 invalid_field", async () => {
    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`x-h${i}`, "v"]));
    for (const headers of [tooMany, { "bad name": "v" }, { "x-a": Array(17).fill("v") }]) {
      expectError(await post("/v1/verify", { action: "signup", subject: { headers } }), 400, "invalid_field");
    }
    const pseudo = await post("/v1/verify", {
      action: "signup",
      subject: { headers: { ":path": "/signup", "sec-fetch-mode": "navigate" } },
    });
    expect(pseudo.statusCode).toBe(200);
  });

  it("hostile input cannot skip the rate limit: past an exhausted budget it is refused, never degraded", async () => {
    const small = await makeTestApp({
      clock: windowStartClock(60),
      env: { WARDEN_RATE_LIMIT_MAX: "5", WARDEN_RATE_LIMIT_WINDOW_SECONDS: "60" },
    });
    try {
      await small.tenant("budget");
      const k = (await small.key("budget")).apiKey;
      const call = (text: string) =>
        small.app.inject({ method: "POST", url: "/v1/verify", headers: bearer(k), payload: text });
      for (let i = 0; i < 5; i++)
        expect((await call('{"action":"signup","subject":{}}')).statusCode).toBe(200);
      const hostile = `{"action":"signup","subject":{"formData":${nestedText(15_000)}}}`;
      for (let i = 0; i < 30; i++) expectError(await call(hostile), 400, "nesting_too_deep");
      expectError(await call('{"action":"signup","subject":{}}'), 429, "rate_limited");
    } finally {
      await small.close();
    }
  });

  it("50 concurrent requests on one key with a hostile body record no event; with a sound body, exactly one", async () => {
    const hostile = await Promise.all(
      Array.from({ length: 50 }, () =>
        raw("/v1/verify", '{"action":"signup","subject":{"userAgent":"\\ud800"}}', {
          "idempotency-key": "burst-h",
        }),
      ),
    );
    for (const res of hostile) expect(res.statusCode).toBe(400);
    const sound = await Promise.all(
      Array.from({ length: 50 }, () =>
        post("/v1/verify", { action: "signup", subject: {} }, { "idempotency-key": "burst-s" }),
      ),
    );
    const ok = sound.filter((r) => r.statusCode === 200).map((r) => r.json().eventId);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok).size).toBe(1);
  });
});

describe("null, empty and long fields", () => {
  it("null on an optional member is treated as absent, on verify, challenge and feedback", async () => {
    const v = await post("/v1/verify", {
      action: "signup",
      session: null,
      surface: null,
      idempotencyKey: null,
      context: null,
      subject: { email: null, ipTrunc: null, userAgent: null, headers: null },
    });
    expect(v.statusCode).toBe(200);
    expect(v.json().degraded).toBe(false);
    // Same fingerprint as the same request without the nulls: a replay, not a conflict.
    const a = await post(
      "/v1/verify",
      { action: "signup", session: null, subject: {} },
      { "idempotency-key": "n-1" },
    );
    const b = await post("/v1/verify", { action: "signup", subject: {} }, { "idempotency-key": "n-1" });
    expect(b.statusCode).toBe(200);
    expect(b.json().eventId).toBe(a.json().eventId);
    expectError(
      await post("/v1/challenge", { eventId: "evt_unknown", session: "s", prefer: null, context: null }),
      404,
      "unknown_event_id",
    );
    expectError(
      await post("/v1/feedback", { eventId: "evt_unknown", outcome: "converted", value: null, source: null }),
      404,
      "unknown_event_id",
    );
  });

  it("null on a required member is missing_required_field; null inside a map is invalid_field", async () => {
    expectError(await post("/v1/verify", { action: null, subject: {} }), 400, "missing_required_field");
    expectError(await post("/v1/verify", { action: "signup", subject: null }), 400, "missing_required_field");
    expectError(
      await post("/v1/verify", { action: "signup", subject: { headers: { "x-a": null } } }),
      400,
      "invalid_field",
    );
  });

  it("action is any string of 1 to 128 characters, as the README says", async () => {
    expect((await post("/v1/verify", { action: "a".repeat(128), subject: {} })).statusCode).toBe(200);
    expect((await post("/v1/verify", { action: "démo request ✓", subject: {} })).statusCode).toBe(200);
    expectError(await post("/v1/verify", { action: "", subject: {} }), 400, "invalid_field");
    expectError(await post("/v1/verify", { action: "a".repeat(129), subject: {} }), 400, "invalid_field");
  });
});

describe("inspectJson", () => {
  it("walks iteratively: a million levels is a result, not a stack overflow", () => {
    let deep: unknown = 0;
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(inspectJson(deep)?.code).toBe("nesting_too_deep");
  });

  it("accepts ordinary bodies and names the path of the first problem", () => {
    expect(inspectJson({ a: [1, "two", { three: null }], b: true })).toBeUndefined();
    expect(inspectJson({ a: [1, { b: "x\u0000" }] })).toMatchObject({
      code: "invalid_string",
      path: "a.1.b",
    });
    expect(inspectJson("y".repeat(JSON_LIMITS.stringLength + 1))).toMatchObject({ path: "body" });
  });

  it("refuses a non-finite number anywhere, and accepts the largest and smallest finite ones", () => {
    expect(inspectJson({ a: [1, { b: Number.POSITIVE_INFINITY }] })).toMatchObject({
      code: "invalid_number",
      path: "a.1.b",
    });
    expect(inspectJson(Number.NEGATIVE_INFINITY)).toMatchObject({ code: "invalid_number", path: "body" });
    expect(inspectJson(Number.NaN)).toMatchObject({ code: "invalid_number" });
    expect(
      inspectJson(JSON.parse("[1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 1e-999]")),
    ).toBeUndefined();
  });
});

describe("request ids and logged URLs", () => {
  async function logged(run: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<unknown>) {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const app = await buildApp(t.deps, {
      logger: { ...(loggerOptions("info") as object), stream: sink } as never,
    });
    try {
      await run(app);
    } finally {
      await app.close();
    }
    return lines;
  }

  it("a short printable X-Request-Id is kept; a long or unprintable one is replaced", async () => {
    const res = await post("/v1/verify", { action: "signup", subject: {} }, { "x-request-id": "req-123" });
    expect(res.headers["x-request-id"]).toBe("req-123");
    for (const bad of ["r".repeat(129), "has space", "tab\there"]) {
      const r = await post("/v1/verify", { action: "signup", subject: {} }, { "x-request-id": bad });
      expect(r.headers["x-request-id"]).not.toBe(bad);
      expect(r.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("one line per request at info, with the request id once, the status, and the URL without its query string", async () => {
    const lines = await logged(async (app) => {
      await app.inject({
        method: "GET",
        url: "/healthz?key=wdn_secret_in_url&email=a@b.c",
        headers: { "x-request-id": "req-log-1" },
      });
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain("wdn_secret_in_url");
    expect(text).not.toContain("a@b.c");
    const mine = lines.filter((l) => l.reqId === "req-log-1");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      msg: "request completed",
      req: { method: "GET", url: "/healthz" },
      res: { statusCode: 200 },
    });
    expect(typeof mine[0]?.responseTime).toBe("number");
  });
});
