import { afterAll, beforeAll, describe, it } from "vitest";
import { expectError, makeTestApp, type TestApp } from "../../testing/harness.js";

/** What a search refuses: each a 400 invalid_query in the Error schema, never a 5xx. */
let t: TestApp;
let reader: string;
beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
});
afterAll(() => t.close());

const get = (url: string) =>
  t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${reader}` } });
const HASH = "a".repeat(64);

describe("GET /v1/events refuses what cannot be searched", () => {
  for (const [rule, query] of [
    ["an email hash that is not 64 hex characters", `emailHash=${"a".repeat(63)}`],
    ["an email hash with a non-hex character", `emailHash=${"g".repeat(64)}`],
    ["a raw email address as the hash", "emailHash=alice%40example.com"],
    ["a network that does not parse", "network=not-an-ip"],
    ["a network wider than /24, which events do not keep", "network=10.0.0.0%2F8"],
    ["an IPv6 network wider than /48", "network=2001%3Adb8%3A%3A%2F32"],
    ["a reason code not in the catalogue", "reasonCode=made_up"],
    ["degraded other than true or false", "degraded=yes"],
    ["a search with a cursor that is not ours", `emailHash=${HASH}&cursor=bm9wZQ`],
  ] as const) {
    it(`${rule} → 400 invalid_query`, async () => {
      expectError(await get(`/v1/events?${query}`), 400, "invalid_query");
      expectError(await get(`/v1/events?${query}&format=csv`), 400, "invalid_query");
    });
  }
});

describe("GET /v1/stats/reasons refuses a bad period", () => {
  it("since after until → 400 invalid_query", async () => {
    expectError(
      await get("/v1/stats/reasons?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z"),
      400,
      "invalid_query",
    );
  });
  it("an unknown parameter → 400 invalid_query", async () => {
    expectError(await get("/v1/stats/reasons?reasonCode=degraded"), 400, "invalid_query");
  });
});
