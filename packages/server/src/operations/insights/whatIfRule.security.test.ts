import { afterAll, beforeAll, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * A userAgents deny rule matches subject.userAgent or the forwarded user-agent header (evidence.ts
 * listHits), so events record the user agent as verify read it: the what-if an operator reads before
 * POST /v1/policy/deny counts the header-only tenant's attempts the rule then denies.
 */
let t: TestApp;
let apiKey: string;
beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("rt");
  apiKey = (await t.key("rt")).apiKey;
});
afterAll(() => t?.close());

const attempt = (i: number) =>
  t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(apiKey),
    payload: {
      action: "signup",
      session: `w${i}`,
      subject: { ipTrunc: `10.0.${i}.0/24`, headers: { ...CHROME_HEADERS, "user-agent": CHROME_UA } },
    },
  });

it("the what-if of a userAgents rule counts the attempts the rule would deny", async () => {
  for (let i = 0; i < 5; i++) expect((await attempt(i)).statusCode).toBe(200);
  const whatIf = await t.app.inject({
    method: "GET",
    url: `/v1/stats/what-if-rule?list=userAgents&value=${encodeURIComponent(CHROME_UA)}`,
    headers: bearer(apiKey),
  });
  const rule = await t.app.inject({
    method: "POST",
    url: "/v1/policy/deny",
    headers: bearer(apiKey),
    payload: { list: "userAgents", value: CHROME_UA },
  });
  expect(rule.statusCode).toBe(200);
  expect((await attempt(9)).json().decision).toBe("deny");
  expect(whatIf.json().events).toBe(5);
});
