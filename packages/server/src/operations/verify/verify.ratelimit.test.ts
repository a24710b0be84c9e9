import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";

let t: TestApp;

beforeAll(async () => {
  t = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "3", WARDEN_RATE_LIMIT_WINDOW_SECONDS: "30" } });
  await t.tenant("acme");
});
afterAll(() => t.close());

const verify = (apiKey: string) =>
  t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(apiKey),
    payload: { action: "signup", subject: {} },
  });

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
});
