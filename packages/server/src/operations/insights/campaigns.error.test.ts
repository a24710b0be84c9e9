import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_HEADER } from "../../console/session.js";
import { bearer, expectError, makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * The campaigns' routes refuse what they cannot answer with stable codes: a read needs ledger:read and
 * its query checked (400 invalid_query, invalid_rule), a rule needs policy:write and a value its list
 * takes (400 invalid_rule), a rule based on a version no longer current is 409 policy_changed; reads
 * are under the key's read budget (429), and a rule sent with the console's cookie needs the console's
 * own page (403 forbidden_origin).
 */
let t: TestApp;
let reader: string;
let operator: string;
const ENV = "e".repeat(32);

beforeAll(async () => {
  // One minute of the read budget throughout (its window does not turn during the test).
  const now = Date.parse("2025-06-01T12:00:10Z");
  t = await makeTestApp({ env: { WARDEN_READ_ROWS_PER_MINUTE: "1000" }, clock: () => now });
  await t.tenant("err");
  reader = (await t.key("err", { scopes: ["ledger:read"] })).apiKey;
  operator = (await t.key("err", { scopes: ["policy:write"] })).apiKey;
});
afterAll(() => t.close());

const deny = (payload: Record<string, unknown>, key = operator, headers: Record<string, string> = {}) =>
  t.app.inject({ method: "POST", url: "/v1/policy/deny", headers: { ...bearer(key), ...headers }, payload });

describe("campaign reads", () => {
  it("need ledger:read: a policy:write key alone is 403 insufficient_scope", async () => {
    for (const url of ["/v1/stats/campaigns", `/v1/stats/what-if-rule?list=environments&value=${ENV}`]) {
      expectError(
        await t.app.inject({ method: "GET", url, headers: bearer(operator) }),
        403,
        "insufficient_scope",
      );
      expectError(await t.app.inject({ method: "GET", url }), 401, "invalid_api_key");
    }
  });

  it.each([
    ["/v1/stats/campaigns?limit=0", "invalid_query"],
    ["/v1/stats/campaigns?limit=101", "invalid_query"],
    ["/v1/stats/campaigns?since=yesterday", "invalid_query"],
    ["/v1/stats/campaigns?kind=environment", "invalid_query"],
    ["/v1/stats/what-if-rule?list=asns&value=x", "invalid_query"],
    ["/v1/stats/what-if-rule?list=shapes&value=x", "invalid_rule"],
    ["/v1/stats/what-if-rule?list=environments", "invalid_query"],
    ["/v1/stats/what-if-rule?list=environments&value=xyz", "invalid_rule"],
    ["/v1/stats/what-if-rule?list=networks&value=203.0.113.7", "invalid_rule"],
    ["/v1/stats/what-if-rule?list=networks&value=203.0.0.0/16", "invalid_rule"],
    ["/v1/stats/what-if-rule?list=emailDomains&value=not%20a%20domain", "invalid_rule"],
  ])("%s: 400 %s", async (url, code) => {
    expectError(await t.app.inject({ method: "GET", url, headers: bearer(reader) }), 400, code);
  });

  it("are under the key's read budget: past it, 429 rate_limited with Retry-After", async () => {
    const budget = await t.key("err", { scopes: ["ledger:read"] });
    // Each read costs at least one row of the key's 1,000 a minute.
    const read = () =>
      t.app.inject({ method: "GET", url: "/v1/stats/campaigns", headers: bearer(budget.apiKey) });
    let last = await read();
    let reads = 1;
    for (; reads < 1100 && last.statusCode === 200; reads++) last = await read();
    expect(reads).toBeGreaterThan(900);
    expectError(last, 429, "rate_limited");
    expect(Number(last.headers["retry-after"])).toBeGreaterThan(0);
    // About a thousand reads one after another: seconds alone, longer on a busy machine.
  }, 90_000);
});

describe("POST /v1/policy/deny", () => {
  it("needs policy:write: a ledger:read key is 403 insufficient_scope, and nothing is stored", async () => {
    expectError(await deny({ list: "environments", value: ENV }, reader), 403, "insufficient_scope");
    expect(await t.store.policies.current("err")).toBeUndefined();
  });

  it.each([
    [{ list: "asns", value: ENV }, "invalid_rule"],
    [{ list: "shapes", value: "ABC" }, "invalid_rule"],
    [{ list: "environments" }, "missing_required_field"],
    [{ list: "environments", value: "" }, "invalid_rule"],
    [{ list: "environments", value: "ABC" }, "invalid_rule"],
    [{ list: "networks", value: "203.0.113.0/25" }, "invalid_rule"],
    [{ list: "environments", value: ENV, basedOn: "3" }, "invalid_rule"],
    [{ list: "environments", value: ENV, extra: 1 }, "invalid_field"],
  ])("%j: 400 %s, nothing stored", async (payload, code) => {
    expectError(await deny(payload), 400, code);
    expect(await t.store.policies.current("err")).toBeUndefined();
  });

  it("a rule based on a version that is no longer current is 409 policy_changed, and stores nothing", async () => {
    await t.store.policies.put("err", JSON.stringify({ deny: { userAgents: ["x"] } }), 1);
    expectError(await deny({ list: "environments", value: ENV, basedOn: "default" }), 409, "policy_changed");
    expect((await t.store.policies.current("err"))?.version).toBe(1);
    const res = await deny({ list: "environments", value: ENV, basedOn: "v1" });
    expect(res.json()).toMatchObject({ added: true, policyVersion: "v2" });
    expect(JSON.parse((await t.store.policies.current("err"))?.document ?? "")).toEqual({
      deny: { userAgents: ["x"], environments: [ENV] },
    });
  });

  it("with the console's cookie, needs the console's own page: another Origin is 403 forbidden_origin", async () => {
    const signIn = await t.app.inject({
      method: "POST",
      url: "/console/session",
      headers: { origin: "http://localhost", host: "localhost" },
      payload: { apiKey: (await t.key("err", { scopes: ["ledger:read", "policy:write"] })).apiKey },
    });
    expect(signIn.statusCode).toBe(200);
    const cookie = String(signIn.headers["set-cookie"]).split(";")[0] as string;
    const send = (headers: Record<string, string>) =>
      t.app.inject({
        method: "POST",
        url: "/v1/policy/deny",
        headers: { cookie, host: "localhost", ...headers },
        payload: { list: "userAgents", value: "evil/1.0" },
      });
    expectError(
      await send({ origin: "https://evil.example", [CONSOLE_HEADER]: "1" }),
      403,
      "forbidden_origin",
    );
    expectError(await send({ origin: "http://localhost" }), 403, "forbidden_origin");
    const ok = await send({ origin: "http://localhost", [CONSOLE_HEADER]: "1" });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ added: true, list: "userAgents" });
  });
});
