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

it("a shapes rule denies the attempts of one request shape, counted by its what-if, and no other shape", async () => {
  await t.tenant("shapes");
  const key = (await t.key("shapes")).apiKey;
  const ja4 = "t13d1516h2_8daaf6152771_d8a2da3f94cd";
  const send = (i: number, headers: Record<string, string>) =>
    t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(key),
      payload: {
        action: "signup",
        session: `s${i}`,
        subject: { ipTrunc: `10.1.${i}.0/24`, userAgent: CHROME_UA, headers, tls: { ja4 } },
      },
    });
  const chrome = { ...CHROME_HEADERS, "user-agent": CHROME_UA };
  // The same browser with its headers in another order: another shape, the same fingerprint and agent.
  const reordered = Object.fromEntries(Object.entries(chrome).reverse());
  const shapeOf = async (res: Awaited<ReturnType<typeof send>>) => {
    const event = await t.store.events.get("shapes", res.json().eventId);
    return event?.signals.shape as string;
  };
  const first = await send(0, chrome);
  expect(first.json().decision).toBe("allow");
  const shape = await shapeOf(first);
  expect(shape).toMatch(/^[0-9a-f]{32}$/);
  for (let i = 1; i < 4; i++) expect(await shapeOf(await send(i, chrome))).toBe(shape);
  const other = await send(4, reordered);
  expect(await shapeOf(other)).not.toBe(shape);

  const whatIf = await t.app.inject({
    method: "GET",
    url: `/v1/stats/what-if-rule?list=shapes&value=${shape}`,
    headers: bearer(key),
  });
  expect(whatIf.statusCode).toBe(200);
  expect(whatIf.json().events).toBe(4);
  const rule = await t.app.inject({
    method: "POST",
    url: "/v1/policy/deny",
    headers: bearer(key),
    payload: { list: "shapes", value: shape },
  });
  expect(rule.statusCode).toBe(200);
  expect(rule.json()).toMatchObject({ added: true, list: "shapes", value: shape });

  const denied = (await send(5, chrome)).json();
  expect(denied.decision).toBe("deny");
  expect(denied.reasons[0]).toBe(`The tenant's deny list names request shape ${shape}.`);
  expect((await send(6, reordered)).json().decision).toBe("allow");
  // Not a digest as events record it: refused, nothing stored.
  const bad = await t.app.inject({
    method: "POST",
    url: "/v1/policy/deny",
    headers: bearer(key),
    payload: { list: "shapes", value: "chrome" },
  });
  expect(bad.statusCode).toBe(400);
});
