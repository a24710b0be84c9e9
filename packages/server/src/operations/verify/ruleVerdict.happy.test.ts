import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import type { Verdict } from "./schema.js";

/**
 * A tenant rule decides; the verdict's confidence is still the contract's "model confidence for the
 * returned decision": the model's margin for the decision the rule returned (0 when another decision
 * cost the model less), never a certainty the model did not compute. The actor type stays the
 * model's reading of the evidence, and the event records that a rule decided (decidedBy "rule").
 * Each case is compared with the same attempt on a tenant without the rule.
 */
let t: TestApp;
const keys: Record<string, string> = {};

beforeAll(async () => {
  t = await makeTestApp();
  for (const tenant of ["listed", "plain"]) {
    await t.tenant(tenant, { rawPii: true });
    keys[tenant] = (await t.key(tenant)).apiKey;
  }
  await t.store.policies.put(
    "listed",
    JSON.stringify({
      deny: { networks: ["203.0.113.0/24"] },
      allow: { emailDomains: ["partner.example"] },
    }),
    Date.now(),
  );
});
afterAll(() => t.close());

async function verify(tenant: string, subject: Record<string, unknown>): Promise<Verdict> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(keys[tenant] as string),
    payload: { action: "signup", subject },
  });
  expect(res.statusCode).toBe(200);
  return res.json<Verdict>();
}

/** The same attempt without the rule, then with it. */
const both = async (subject: Record<string, unknown>) => ({
  model: await verify("plain", subject),
  rule: await verify("listed", subject),
});

describe("a tenant rule's verdict", () => {
  it("a deny-list deny of an attempt the model allows: confidence 0 (the model's for deny), the model's actor type, decidedBy rule", async () => {
    const { model, rule } = await both({ userAgent: CHROME_UA, headers: CHROME_HEADERS, ip: "203.0.113.9" });
    expect(model).toMatchObject({ decision: "allow", actorType: "human" });
    expect(model.confidence).toBeGreaterThan(0);
    expect(rule).toMatchObject({ decision: "deny", actorType: "human", confidence: 0 });
    expect(rule.reasons[0]).toBe("The tenant's deny list names network 203.0.113.0/24.");
    const event = await t.store.events.get("listed", rule.eventId);
    expect(event).toMatchObject({ decision: "deny", decidedBy: "rule", confidence: 0 });
  });

  it("an allow-list allow of an attempt the model challenges: the model's margin for allow, not a certainty", async () => {
    const { model, rule } = await both({ userAgent: "curl/8.5.0", email: "ops@partner.example" });
    expect(model.decision).toBe("challenge");
    expect(rule.decision).toBe("allow");
    expect(rule.confidence).toBeLessThan(0.5);
  });

  it("where the rule and the model agree, the confidence is the model's own margin", async () => {
    const { model, rule } = await both({
      userAgent: "curl/8.5.0",
      email: "x@mailinator.com",
      ip: "203.0.113.9",
    });
    expect(model.decision).toBe("deny");
    expect(model.confidence).toBeGreaterThan(0);
    expect(model.confidence).toBeLessThan(1);
    expect(rule).toMatchObject({
      decision: "deny",
      actorType: model.actorType,
      confidence: model.confidence,
    });
  });
});
