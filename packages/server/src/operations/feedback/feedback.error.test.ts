import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, expectError, makeTestApp, type TestApp } from "../../testing/harness.js";

let t: TestApp;
let key: string;
let eventId: string;

beforeAll(async () => {
  t = await makeTestApp({ env: { WARDEN_BODY_LIMIT_BYTES: "2048" } });
  await t.tenant("acme");
  await t.tenant("other");
  key = (await t.key("acme")).apiKey;
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(key),
    payload: { action: "signup", subject: {} },
  });
  eventId = res.json().eventId;
});
afterAll(() => t.close());

const post = (payload: unknown, headers: Record<string, string> = bearer(key)) =>
  t.app.inject({
    method: "POST",
    url: "/v1/feedback",
    headers,
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
  });

describe("feedback errors", () => {
  it.each([
    ["no eventId", { outcome: "converted" }],
    ["no outcome", { eventId: "evt_x" }],
    ["null outcome", { eventId: "evt_x", outcome: null }],
  ])("400 missing_required_field: %s", async (_n, payload) => {
    expectError(await post(payload), 400, "missing_required_field");
  });

  it.each([
    ["an unknown outcome", { outcome: "refund" }, "invalid_outcome"],
    ["a negative value", { outcome: "credit_burn", value: -1 }, "invalid_value"],
    ["a value over 1000000", { outcome: "credit_burn", value: 1_000_001 }, "invalid_value"],
    ["a value that is not a number", { outcome: "credit_burn", value: "12" }, "invalid_value"],
    ["an unknown unit", { outcome: "credit_burn", value: 1, unit: "eur" }, "invalid_unit"],
    ["a unit without a value", { outcome: "credit_burn", unit: "credits" }, "unit_without_value"],
    ["an unknown source", { outcome: "credit_burn", source: "gut_feeling" }, "invalid_source"],
    [
      "observedAt without an offset",
      { outcome: "converted", observedAt: "2026-11-20T10:00:00" },
      "invalid_observed_at",
    ],
    [
      "observedAt that is not a date",
      { outcome: "converted", observedAt: "yesterday" },
      "invalid_observed_at",
    ],
    [
      "observedAt far in the future",
      { outcome: "converted", observedAt: "2999-01-01T00:00:00Z" },
      "invalid_observed_at",
    ],
  ])("400 for %s", async (_n, payload, code) => {
    expectError(await post({ eventId, ...payload }), 400, code);
  });

  it("401 invalid_api_key and 403 insufficient_scope", async () => {
    expectError(
      await post({ eventId, outcome: "converted" }, { "content-type": "application/json" }),
      401,
      "invalid_api_key",
    );
    const verifyOnly = (await t.key("acme", { scopes: ["verify:write"] })).apiKey;
    expectError(await post({ eventId, outcome: "converted" }, bearer(verifyOnly)), 403, "insufficient_scope");
  });

  it("404 unknown_event_id for a missing event and for another tenant's event alike", async () => {
    expectError(await post({ eventId: "evt_nope", outcome: "converted" }), 404, "unknown_event_id");
    const otherKey = (await t.key("other")).apiKey;
    const res = await post({ eventId, outcome: "converted" }, bearer(otherKey));
    expectError(res, 404, "unknown_event_id");
    expect(res.json().message).toBe(
      (await post({ eventId: "evt_nope", outcome: "converted" })).json().message,
    );
  });

  it("409 idempotency_conflict: same key, different body", async () => {
    const h = { ...bearer(key), "idempotency-key": "fb-conflict" };
    expect((await post({ eventId, outcome: "converted", value: 10 }, h)).statusCode).toBe(200);
    expectError(await post({ eventId, outcome: "converted", value: 11 }, h), 409, "idempotency_conflict");
  });

  it("413 payload_too_large and 415 unsupported_media_type", async () => {
    expectError(
      await post({ eventId, outcome: "converted", pad: "x".repeat(3000) }),
      413,
      "payload_too_large",
    );
    expectError(
      await post("outcome=converted", { authorization: `Bearer ${key}`, "content-type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
  });

  it("malformed JSON is 400 invalid_json", async () => {
    expectError(await post("{"), 400, "invalid_json");
  });
});
