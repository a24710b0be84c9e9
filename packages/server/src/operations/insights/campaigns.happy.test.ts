import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import { environmentDigest } from "../verify/signals/pageEnvironment.js";

/**
 * A campaign found and stopped in the console's terms (docs/console.md, "Campaigns"): 30 signups of
 * one page environment from 30 networks, 10 later reported abuse_confirmed through feedback. The
 * campaign shows the 10 labelled and the 20 that share the environment unlabelled; the what-if of a
 * deny rule on it counts the 30; applying the rule stores the policy's next version, and the next
 * verify with that environment is denied by the tenant's deny list.
 */
let now = Date.parse("2025-06-01T12:00:00Z");
let t: TestApp;
let writer: string;
let reader: string;
let operator: string;

const DEVICE = {
  screen: "1920x1080",
  colorDepth: 24,
  pixelRatio: 1,
  cores: 8,
  memory: 8,
  touchPoints: 0,
  timezone: "Europe/Berlin",
  languages: "de-DE,de,en",
  platform: "Win32",
  renderer: "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)",
  canvas: "1a2b3c4d5e",
  canvasNoise: false,
};
const DIGEST = environmentDigest(DEVICE) as string;

let sessions = 0;
async function signup(network: string) {
  now += 60_000;
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(writer),
    payload: {
      action: "signup",
      session: `camp-${++sessions}`,
      subject: {
        userAgent: CHROME_UA,
        ipTrunc: network,
        headers: CHROME_HEADERS,
        page: { environment: DEVICE },
      },
    },
  });
  expect(res.statusCode).toBe(200);
  return res.json() as { eventId: string; decision: string; reasonDetails: { code: string }[] };
}

const get = (url: string, key = reader) => t.app.inject({ method: "GET", url, headers: bearer(key) });

beforeAll(async () => {
  t = await makeTestApp({ clock: () => now });
  await t.tenant("camp");
  writer = (await t.key("camp", { scopes: ["verify:write", "feedback:write"] })).apiKey;
  reader = (await t.key("camp", { scopes: ["ledger:read"] })).apiKey;
  operator = (await t.key("camp", { scopes: ["ledger:read", "policy:write"] })).apiKey;
  const events = [];
  for (let i = 0; i < 30; i++) events.push(await signup(`203.0.${i}.0/24`));
  for (const e of events.slice(0, 10)) {
    now += 1000;
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/feedback",
      headers: bearer(writer),
      payload: { eventId: e.eventId, outcome: "abuse_confirmed" },
    });
    expect(res.statusCode).toBe(200);
  }
});
afterAll(() => t.close());

describe("a campaign of one page environment", () => {
  it("shows what the 10 abusive attempts share, and the 20 attempts that share it unlabelled", async () => {
    const res = await get("/v1/stats/campaigns");
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      tenantId: "camp",
      abusiveAttempts: 10,
      truncated: false,
      policyVersion: "default",
    });
    const environment = body.rows.find((r: { kind: string }) => r.kind === "environment");
    expect(environment).toMatchObject({
      value: DIGEST,
      labelled: 10,
      unlabelled: 20,
      good: 0,
      list: "environments",
      listed: false,
    });
    expect(environment.decisions.allow + environment.decisions.challenge + environment.decisions.deny).toBe(
      30,
    );
    // The networks differ: none is shared by two abusive attempts.
    expect(body.rows.some((r: { kind: string }) => r.kind === "network")).toBe(false);
  });

  it("a deny rule's what-if over the last 30 days: the attempts it would have matched, by label", async () => {
    const res = await get(`/v1/stats/what-if-rule?list=environments&value=${DIGEST}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      list: "environments",
      value: DIGEST,
      events: 30,
      abusive: 10,
      good: 0,
      unlabelled: 20,
      policyVersion: "default",
      listed: false,
    });
    expect(Date.parse(res.json().until) - Date.parse(res.json().since)).toBe(30 * 86_400_000);
  });

  it("applying the rule stores the policy's next version, and the next verify with the environment is denied", async () => {
    const before = await signup("198.18.7.0/24");
    expect(before.reasonDetails.map((d) => d.code)).not.toContain("tenant_deny_list");
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/policy/deny",
      headers: bearer(operator),
      payload: { list: "environments", value: DIGEST, basedOn: "default" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      tenantId: "camp",
      list: "environments",
      value: DIGEST,
      added: true,
      policyVersion: "v1",
      previousVersion: "default",
    });
    expect(JSON.parse((await t.store.policies.current("camp"))?.document ?? "{}")).toEqual({
      deny: { environments: [DIGEST] },
    });
    const after = await signup("198.18.8.0/24");
    expect(after.decision).toBe("deny");
    expect(after.reasonDetails[0]?.code).toBe("tenant_deny_list");
    const campaigns = (await get("/v1/stats/campaigns")).json();
    expect(campaigns.policyVersion).toBe("v1");
    expect(campaigns.rows.find((r: { kind: string }) => r.kind === "environment")).toMatchObject({
      listed: true,
    });
  });

  it("the same rule again stores nothing (added: false)", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/policy/deny",
      headers: bearer(operator),
      payload: { list: "environments", value: DIGEST },
    });
    expect(res.json()).toMatchObject({ added: false, policyVersion: "v1", previousVersion: "v1" });
    expect((await t.store.policies.current("camp"))?.version).toBe(1);
  });
});
