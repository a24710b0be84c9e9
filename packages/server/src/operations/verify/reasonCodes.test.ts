import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import { REASON_CATEGORIES, REASON_CODES } from "./reasonCodes.js";

/**
 * reasonDetails (docs/api.md#reason-codes: the additive object form of reasons): entry i is reasons[i] with
 * a stable code from one catalogue and its category; the catalogue and docs/api.md agree.
 */
const apiDoc = fs.readFileSync(new URL("../../../../../docs/api.md", import.meta.url), "utf8");

describe("the reason catalogue", () => {
  it("matches the Reason codes table of docs/api.md row for row, with each code's category", () => {
    const section = apiDoc.split("### Reason codes")[1]?.split("\n### ")[0] ?? "";
    const rows = [...section.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*([a-z]+)\s*\|/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(rows)).toEqual(REASON_CODES);
    for (const category of Object.values(REASON_CODES)) expect(REASON_CATEGORIES).toContain(category);
  });
});

describe("verdicts carry reasonDetails beside reasons", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "100000" } });
    await t.tenant("acme");
    await t.store.policies.put(
      "acme",
      JSON.stringify({ deny: { networks: ["198.51.100.0/24"] } }),
      Date.now(),
    );
    key = (await t.key("acme")).apiKey;
  });
  afterAll(() => t.close());

  const verify = async (subject: Record<string, unknown>) => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(key),
      payload: { action: "signup", subject },
    });
    expect(res.statusCode).toBe(200);
    return res.json() as {
      decision: string;
      reasons: string[];
      reasonDetails: { code: string; category: string; message: string }[];
    };
  };

  it.each([
    [
      "a browser with nothing against it",
      { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "81.2.1.0/24" },
    ],
    ["a script", { userAgent: "curl/8.5.0", ipTrunc: "81.2.2.0/24" }],
    ["a deny-listed network", { userAgent: CHROME_UA, ipTrunc: "198.51.100.0/24" }],
    ["no evidence at all", {}],
  ])("%s: one detail per reason, same message, catalogued code and category", async (_what, subject) => {
    const v = await verify(subject);
    expect(v.reasonDetails.map((d) => d.message)).toEqual(v.reasons);
    for (const d of v.reasonDetails)
      expect(REASON_CODES[d.code as keyof typeof REASON_CODES]).toBe(d.category);
    expect(v.reasonDetails.at(-1)?.code).toBe("risk_estimate");
  });

  it("codes name what decided: the deny list, an automation user agent, thin evidence", async () => {
    const codes = async (subject: Record<string, unknown>) =>
      (await verify(subject)).reasonDetails.map((d) => d.code);
    expect((await codes({ userAgent: CHROME_UA, ipTrunc: "198.51.100.0/24" }))[0]).toBe("tenant_deny_list");
    expect(await codes({ userAgent: "curl/8.5.0", ipTrunc: "81.2.3.0/24" })).toContain("ua_automation");
    expect(await codes({})).toEqual(["ua_missing", "risk_estimate"]);
  });
});
