import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentRequestHeaders, registerAgent, type TestAgent } from "../../../../testing/agents.js";
import { bearer, makeTestApp, type TestApp } from "../../../../testing/harness.js";
import type { Verdict } from "../../../verify/schema.js";
import { solvePow } from "../proofOfWork/proofOfWork.js";

const AGENT_URL = "https://agent.example";
let t: TestApp;
let apiKey: string;
const agents: TestAgent[] = [];

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  ({ apiKey } = await t.key("acme"));
  // Step-up is friction for a challenged attempt: this tenant challenges verified agents on signup.
  await t.store.policies.put(
    "acme",
    JSON.stringify({ actions: { signup: { verifiedAgents: "challenge" } } }),
    Date.now(),
  );
  agents.push(await registerAgent(t.store, "Example Agents", AGENT_URL));
  agents.push(await registerAgent(t.store, "Other Agents", "https://other.example"));
  await t.deps.agents.reload();
});
afterAll(() => t.close());

const agent = (i: number) => agents[i] as TestAgent;

/**
 * Headers of a request signed by agent `i` (with a nonce, e.g. the step-up's), always naming the first
 * agent's Signature-Agent, so another agent's key is a key of the wrong operator.
 */
const signed = (i: number, nonce = "first-request", keyid = agent(i).keyid): Record<string, string> =>
  agentRequestHeaders({ ...agent(0), privateKey: agent(i).privateKey }, { nonce, keyid });

const post = (url: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });

async function verifyEvent(subject: Record<string, unknown>, session: string): Promise<Verdict> {
  const res = await post("/v1/verify", { action: "signup", session, subject });
  expect(res.statusCode).toBe(200);
  return res.json<Verdict>();
}

async function issue(eventId: string, session: string) {
  const res = await post("/v1/challenge", { eventId, session, prefer: ["web_bot_auth_stepup"] });
  expect(res.statusCode).toBe(200);
  return res.json<{ challengeId: string; method: string; instructions: Record<string, unknown> }>();
}

/** A tenant of its own with `policy`, and a caller with its key. */
async function tenantWithPolicy(id: string, policy: Record<string, unknown>) {
  await t.tenant(id);
  const { apiKey: key } = await t.key(id);
  await t.store.policies.put(id, JSON.stringify(policy), Date.now());
  return (url: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: "POST", url, headers: bearer(key), payload });
}

describe("web_bot_auth_stepup", () => {
  it("is issued for a verified agent: a nonce and the key to sign with", async () => {
    const v = await verifyEvent({ userAgent: "ExampleAgent/1", headers: signed(0) }, "s-1");
    expect(v.actorType).toBe("agent_principal");
    expect(v.decision).toBe("challenge");
    const c = await issue(v.eventId, "s-1");
    expect(c.method).toBe("web_bot_auth_stepup");
    expect(c.instructions).toMatchObject({
      type: "web_bot_auth",
      tag: "web-bot-auth",
      keyid: agent(0).keyid,
      components: ["@authority", "signature-agent"],
    });
    expect(String(c.instructions.nonce).length).toBeGreaterThanOrEqual(40);
  });

  it("completes with a request signed by the same key over the nonce; the re-verify honors the clear once", async () => {
    const v = await verifyEvent({ userAgent: "ExampleAgent/1", headers: signed(0) }, "s-2");
    const c = await issue(v.eventId, "s-2");
    const nonce = String(c.instructions.nonce);

    const wrongNonce = await post("/v1/challenge", {
      challengeId: c.challengeId,
      session: "s-2",
      proof: { method: "web_bot_auth", headers: signed(0, "some-other-nonce") },
    });
    expect(wrongNonce.statusCode).toBe(400);
    expect(wrongNonce.json()).toMatchObject({ code: "invalid_challenge_proof" });

    const otherKey = await post("/v1/challenge", {
      challengeId: c.challengeId,
      session: "s-2",
      proof: { method: "web_bot_auth", headers: signed(1, nonce) },
    });
    expect(otherKey.statusCode).toBe(400);
    expect(otherKey.json()).toMatchObject({ code: "invalid_challenge_proof" });

    const pow = await post("/v1/challenge", {
      challengeId: c.challengeId,
      session: "s-2",
      proof: { nonce: "1" },
    });
    expect(pow.json()).toMatchObject({ code: "challenge_method_mismatch" });

    const done = await post("/v1/challenge", {
      challengeId: c.challengeId,
      session: "s-2",
      proof: { method: "web_bot_auth", headers: signed(0, nonce) },
    });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ ok: true, method: "web_bot_auth_stepup", boundTo: "s-2" });

    const again = await post("/v1/challenge", {
      challengeId: c.challengeId,
      session: "s-2",
      proof: { method: "web_bot_auth", headers: signed(0, nonce) },
    });
    expect(again.statusCode).toBe(409);

    const reverify = await post("/v1/verify", {
      action: "signup",
      session: "s-2",
      subject: { userAgent: "ExampleAgent/1", headers: signed(0, "re-verify") },
      context: { challengeId: c.challengeId },
    });
    expect(reverify.json()).toMatchObject({ decision: "allow", challengeCleared: true, degraded: false });
  });

  it("is skipped (proof_of_work instead) for an attempt without a verified signature", async () => {
    const unsigned = await verifyEvent({ userAgent: "curl/8.5.0" }, "s-3");
    expect(unsigned.decision).toBe("challenge");
    expect((await issue(unsigned.eventId, "s-3")).method).toBe("proof_of_work");
    const unknownKey = await verifyEvent({ headers: signed(0, "n", "unknown-key") }, "s-4");
    expect(unknownKey.decision).toBe("challenge");
    expect((await issue(unknownKey.eventId, "s-4")).method).toBe("proof_of_work");
  });

  it("is issued for any signed attempt when the tenant's policy asks for step-up", async () => {
    const call = await tenantWithPolicy("stepup", {
      challenge: { webBotAuthStepUp: true, powDifficulty: { default: 5, severe: 7 } },
    });
    const v = (
      await call("/v1/verify", {
        action: "signup",
        session: "s-5",
        subject: { headers: signed(0, "n", "unknown-key") },
      })
    ).json<Verdict>();
    // A signature with a key nobody published is automation evidence: its challenges are sealed severe.
    expect(v).toMatchObject({ decision: "challenge", actorType: "agent_abusive" });
    const c = (
      await call("/v1/challenge", { eventId: v.eventId, session: "s-5", prefer: ["web_bot_auth_stepup"] })
    ).json<{
      method: string;
      instructions: Record<string, unknown>;
    }>();
    expect(c.method).toBe("web_bot_auth_stepup");
    expect(c.instructions.keyid).toBe("unknown-key");
    // The same tenant's proof of work uses its raised difficulty (severe's, for this event).
    const pow = (await call("/v1/challenge", { eventId: v.eventId, session: "s-5" })).json<{
      instructions: { difficulty: number };
    }>();
    expect(pow.instructions.difficulty).toBe(7);
  });

  it("is not issued for a signature that names no key: there is no key to prove, proof of work instead", async () => {
    const call = await tenantWithPolicy("stepup-nokey", { challenge: { webBotAuthStepUp: true } });
    const v = (
      await call("/v1/verify", {
        action: "signup",
        session: "s-nokey",
        subject: {
          headers: { signature: "sig1=:AAAA:", "signature-input": 'sig1=();tag="other"' },
        },
      })
    ).json<Verdict>();
    expect(v.decision).toBe("challenge");
    const issued = await call("/v1/challenge", {
      eventId: v.eventId,
      session: "s-nokey",
      prefer: ["web_bot_auth_stepup"],
    });
    expect(issued.json()).toMatchObject({ method: "proof_of_work" });
  });
});

describe("proof-of-work difficulty from the tenant policy", () => {
  it("a raised difficulty applies to new challenges only: an issued one keeps its sealed value", async () => {
    await t.tenant("sealed");
    const { apiKey: key } = await t.key("sealed");
    const call = (url: string, payload: Record<string, unknown>) =>
      t.app.inject({ method: "POST", url, headers: bearer(key), payload });
    const v = (await call("/v1/verify", { action: "signup", session: "p-1", subject: {} })).json<Verdict>();
    expect(v.decision).toBe("challenge");
    const issued = (await call("/v1/challenge", { eventId: v.eventId, session: "p-1" })).json<{
      challengeId: string;
      instructions: { difficulty: number; seed: string };
    }>();
    expect(issued.instructions.difficulty).toBe(4);

    await t.store.policies.put(
      "sealed",
      JSON.stringify({ challenge: { powDifficulty: { default: 6 } } }),
      Date.now(),
    );
    t.deps.tenantPolicies.forget("sealed");
    const later = (await call("/v1/challenge", { eventId: v.eventId, session: "p-1" })).json<{
      instructions: { difficulty: number };
    }>();
    expect(later.instructions.difficulty).toBe(6);

    const { nonce } = solvePow(issued.instructions.seed, 4);
    const done = await call("/v1/challenge", {
      challengeId: issued.challengeId,
      session: "p-1",
      proof: { nonce },
    });
    expect(done.statusCode).toBe(200);
  });
});
