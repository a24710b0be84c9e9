import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp, windowStartClock } from "../../testing/harness.js";

let t: TestApp;

beforeAll(async () => {
  // Every key of this file counts in one 30 s window that began with it (a boundary crossed mid-test
  // would start a key's count over).
  t = await makeTestApp({
    clock: windowStartClock(30),
    env: { WARDEN_RATE_LIMIT_MAX: "3", WARDEN_RATE_LIMIT_WINDOW_SECONDS: "30" },
  });
  await t.tenant("acme");
});
afterAll(() => t.close());

const verify = (apiKey: string, payload: Record<string, unknown> = { action: "signup", subject: {} }) =>
  t.app.inject({ method: "POST", url: "/v1/verify", headers: bearer(apiKey), payload });

describe("429 rate limits per API key", () => {
  it("answers 429 in the Error schema with Retry-After clamped to 1..60 once the key's budget is spent", async () => {
    const { apiKey } = await t.key("acme");
    for (let i = 0; i < 3; i++) expect((await verify(apiKey)).statusCode).toBe(200);
    const limited = await verify(apiKey);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({
      error: "too_many_requests",
      code: "rate_limited",
      message: expect.any(String),
    });
    const retryAfter = Number(limited.headers["retry-after"]);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
  });

  it("counts each key separately", async () => {
    const first = await t.key("acme");
    const second = await t.key("acme");
    for (let i = 0; i < 4; i++) await verify(first.apiKey);
    expect((await verify(first.apiKey)).statusCode).toBe(429);
    expect((await verify(second.apiKey)).statusCode).toBe(200);
  });

  it("says where the key stands on every counted answer", async () => {
    const { apiKey } = await t.key("acme");
    const first = await verify(apiKey);
    expect(first.headers["ratelimit-limit"]).toBe("3");
    expect(first.headers["ratelimit-remaining"]).toBe("2");
  });

  it("counts replays of an idempotency key, but not requests refused before any work (400, 403)", async () => {
    const { apiKey } = await t.key("acme");
    for (let i = 0; i < 4; i++) expect((await verify(apiKey, { action: "signup" })).statusCode).toBe(400);
    const once = { action: "signup", subject: {}, idempotencyKey: "k-replayed" };
    expect((await verify(apiKey, once)).statusCode).toBe(200);
    expect((await verify(apiKey, once)).headers["idempotent-replayed"]).toBe("true");
    expect((await verify(apiKey, once)).statusCode).toBe(200);
    expect((await verify(apiKey, once)).statusCode).toBe(429);
  });

  it("counts a re-verify with a challengeId once, whether or not the clear is honored", async () => {
    const { apiKey } = await t.key("acme");
    const reverify = {
      action: "signup",
      session: "s1",
      subject: {},
      context: { challengeId: "chl_unknown" },
    };
    for (let i = 0; i < 3; i++) expect((await verify(apiKey, reverify)).statusCode).toBe(200);
    expect((await verify(apiKey, reverify)).statusCode).toBe(429);
  });

  it("still counts a refused request's velocity counters: the attempt happened", async () => {
    const { apiKey } = await t.key("acme");
    const attempt = { action: "signup", subject: { emailSha256: "e".repeat(64) } };
    for (let i = 0; i < 3; i++) await verify(apiKey, attempt);
    expect((await verify(apiKey, attempt)).statusCode).toBe(429);
    // The fourth attempt was refused but counted: a fresh key sees five attempts with this one.
    const fresh = await t.key("acme");
    const fifth = (await verify(fresh.apiKey, attempt)).json();
    expect(fifth.reasons.join(" ")).toMatch(/about 5 signup attempts/);
  });

  it("challenge and feedback have budgets of their own, counted as soon as the key is known", async () => {
    const { apiKey } = await t.key("acme");
    const feedback = () =>
      t.app.inject({
        method: "POST",
        url: "/v1/feedback",
        headers: bearer(apiKey),
        payload: { eventId: "evt_unknown", outcome: "converted", observedAt: new Date().toISOString() },
      });
    for (let i = 0; i < 3; i++) expect((await feedback()).statusCode).toBe(404);
    const limited = await feedback();
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("rate_limited");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(limited.headers["ratelimit-remaining"]).toBe("0");
    expect((await verify(apiKey)).statusCode).toBe(200);
  });
});
