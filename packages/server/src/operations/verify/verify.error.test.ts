import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, expectError, makeTestApp, type TestApp } from "../../testing/harness.js";

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await makeTestApp({ env: { WARDEN_BODY_LIMIT_BYTES: "4096" } });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

const body = { action: "signup", subject: { userAgent: "curl/8.5.0" } };

async function post(payload: unknown, headers: Record<string, string> = bearer(key)) {
  return t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers,
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

describe("400 missing_required_field: action and subject are required", () => {
  it.each([
    ["no action", { subject: {} }],
    ["no subject", { action: "signup" }],
    ["null subject", { action: "signup", subject: null }],
    ["null action", { action: null, subject: {} }],
    ["empty object", {}],
  ])("%s", async (_name, payload) => {
    expectError(await post(payload), 400, "missing_required_field");
  });

  it("a POST with no body at all", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: { authorization: `Bearer ${key}` },
    });
    expectError(res, 400, "missing_required_field");
  });

  it("an empty JSON body", async () => {
    expectError(await post(""), 400, "missing_required_field");
  });

  it("names the missing field", async () => {
    expect((await post({ action: "signup" })).json().message).toMatch(/subject/);
  });
});

describe("400 for other malformed requests", () => {
  it("malformed JSON → invalid_json", async () => {
    expectError(await post('{"action": "signup", "subject": {'), 400, "invalid_json");
  });

  it.each([
    ["action not a string", { action: 7, subject: {} }],
    ["subject not an object", { action: "signup", subject: "x" }],
    ["a JSON array body", [1, 2]],
    ["emailSha256 not 64 hex", { action: "signup", subject: { emailSha256: "abc" } }],
    ["ipTrunc not a network", { action: "signup", subject: { ipTrunc: "nope" } }],
    ["headers not strings", { action: "signup", subject: { headers: { a: 1 } } }],
    ["session over 128 characters", { action: "signup", subject: {}, session: "s".repeat(129) }],
    ["context.logOnly not a boolean", { action: "signup", subject: {}, context: { logOnly: "yes" } }],
  ])("%s → invalid_field", async (_name, payload) => {
    expectError(await post(payload), 400, "invalid_field");
  });

  it("an idempotency key that is too long → invalid_idempotency_key", async () => {
    expectError(
      await post(body, { ...bearer(key), "idempotency-key": "k".repeat(256) }),
      400,
      "invalid_idempotency_key",
    );
  });
});

describe("401 invalid_api_key", () => {
  it.each([
    ["missing", { "content-type": "application/json" }],
    ["not Bearer", { "content-type": "application/json", authorization: "Basic abc" }],
    ["malformed", { "content-type": "application/json", authorization: "Bearer nope" }],
    ["unknown", { "content-type": "application/json", authorization: `Bearer wdn_${"A".repeat(43)}` }],
  ])("%s key", async (_name, headers) => {
    expectError(await post(body, headers), 401, "invalid_api_key");
  });

  it("a revoked key stops working at once", async () => {
    const k = await t.key("acme");
    expect((await post(body, bearer(k.apiKey))).statusCode).toBe(200);
    // Revoked behind the app's back (as the CLI or another process would): verify, which
    // authenticates from memory, is refused when its event is written (nothing is written: store contract).
    await t.store.apiKeys.revoke(k.keyId, Date.now());
    const refused = await post({ ...body, session: "after-revoke" }, bearer(k.apiKey));
    expectError(refused, 401, "invalid_api_key");
    expectError(await post(body, bearer(k.apiKey)), 401, "invalid_api_key");
  });

  it("a revoked key cannot replay an earlier answer either", async () => {
    const k = await t.key("acme");
    const once = { ...body, idempotencyKey: "k-before-revoke" };
    expect((await post(once, bearer(k.apiKey))).statusCode).toBe(200);
    expect((await post(once, bearer(k.apiKey))).headers["idempotent-replayed"]).toBe("true");
    await t.store.apiKeys.revoke(k.keyId, Date.now());
    expectError(await post(once, bearer(k.apiKey)), 401, "invalid_api_key");
  });

  it("authentication comes before body checks", async () => {
    expectError(await post("{broken", { "content-type": "application/json" }), 401, "invalid_api_key");
  });
});

describe("403", () => {
  it("insufficient_scope without verify:write", async () => {
    const k = await t.key("acme", { scopes: ["feedback:write", "challenge:write"] });
    expectError(await post(body, bearer(k.apiKey)), 403, "insufficient_scope");
  });

  it.each([
    ["raw email", { email: "ann@example.org" }],
    ["raw ip", { ip: "203.0.113.7" }],
  ])("raw_pii_not_enabled for %s without the tenant's opt-in", async (_name, subject) => {
    expectError(await post({ action: "signup", subject }), 403, "raw_pii_not_enabled");
  });
});

describe("409 idempotency_conflict", () => {
  it("same key, different body", async () => {
    const h = { ...bearer(key), "idempotency-key": "conflict-1" };
    expect((await post(body, h)).statusCode).toBe(200);
    expectError(await post({ ...body, action: "trial_activation" }, h), 409, "idempotency_conflict");
  });
});

describe("413 payload_too_large", () => {
  it("a body over the byte cap", async () => {
    expectError(await post({ ...body, surface: "x".repeat(5000) }), 413, "payload_too_large");
  });
});

describe("415 unsupported_media_type", () => {
  it.each(["text/plain", "application/x-www-form-urlencoded", "application/xml"])("%s", async (type) => {
    expectError(
      await post("action=signup", { authorization: `Bearer ${key}`, "content-type": type }),
      415,
      "unsupported_media_type",
    );
  });

  it("accepts JSON with a charset", async () => {
    const res = await post(body, {
      authorization: `Bearer ${key}`,
      "content-type": "application/json; charset=utf-8",
    });
    expect(res.statusCode).toBe(200);
  });
});

describe("404 for unknown routes", () => {
  it("answers in the Error schema", async () => {
    expectError(await t.app.inject({ method: "GET", url: "/v1/nothing" }), 404, "route_not_found");
  });
});
