import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";
import { CONSOLE_READ_ROUTES } from "../../testing/readRoutes.js";
import { QUERY_FIELDS } from "./readRoute.js";

/**
 * Every query parameter of the read routes is caller-controlled: generated query strings (known and
 * unknown names, hostile values) never produce a 5xx, and every refusal is the Error schema's 400
 * invalid_query.
 */
let t: TestApp;
let reader: string;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
  const writer = (await t.key("acme", { scopes: ["verify:write"] })).apiKey;
  await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(writer),
    payload: { action: "signup", subject: {}, session: "s1" },
  });
});
afterAll(() => t.close());

const ROUTES = CONSOLE_READ_ROUTES;
const NAMES = [...QUERY_FIELDS, "__proto__", "constructor"];
const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer().map(String),
  fc.double({ noNaN: false }).map(String),
  fc.date({ noInvalidDate: false }).map((d) => (Number.isNaN(d.getTime()) ? "Invalid" : d.toISOString())),
  fc.constantFrom("csv", "json", "hour", "day", "allow", "human", "0", "-1", "1e309", "%00", "[]", "{}"),
  fc.base64String({ maxLength: 40 }),
);
const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 8 })), value), {
  maxLength: 5,
});

describe("generated query strings on the read routes", () => {
  for (const route of ROUTES) {
    it(`${route}: never a 5xx; every refusal is 400 invalid_query in the Error schema`, async () => {
      await fc.assert(
        fc.asyncProperty(query, async (pairs) => {
          const qs = new URLSearchParams(pairs).toString();
          const res = await t.app.inject({
            method: "GET",
            url: `${route}?${qs}`,
            headers: { authorization: `Bearer ${reader}` },
          });
          expect(res.statusCode, qs).toBeLessThan(500);
          if (res.statusCode !== 200) {
            expect(res.statusCode, qs).toBe(400);
            expect(res.json(), qs).toMatchObject({ error: "bad_request", code: "invalid_query" });
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});
