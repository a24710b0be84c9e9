import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentRequestHeaders, registerAgent, type TestAgent } from "../../testing/agents.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import { parseAgentJwks } from "../../webBotAuth/agentKeys.js";
import { signRequest } from "../../webBotAuth/signRequest.js";
import type { Verdict } from "./schema.js";

const AGENT_URL = "https://agent.example";
const BOT_UA = "ExampleAgent/1.0 (+https://agent.example/bot)";

let t: TestApp;
let apiKey: string;
let agent: TestAgent;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme", { rawPii: true });
  ({ apiKey } = await t.key("acme"));
  agent = await registerAgent(t.store, "Example Agents Inc.", AGENT_URL);
  await t.deps.agents.reload();
});
afterAll(() => t.close());

/** The headers the agent sends, signed now with its registered key (or `flip` to forge). */
const agentHeaders = (o: { flip?: boolean; created?: number } = {}) =>
  agentRequestHeaders(agent, { ...o, extra: { "user-agent": BOT_UA } });

async function verify(body: Record<string, unknown>): Promise<Verdict> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(apiKey),
    payload: body,
  });
  expect(res.statusCode).toBe(200);
  return res.json<Verdict>();
}

describe("verify with Web Bot Auth", () => {
  it("a valid signature by a registered key: agent_principal, principal resolved to the operator", async () => {
    const v = await verify({
      action: "signup",
      subject: { userAgent: BOT_UA, headers: agentHeaders(), ipTrunc: "198.51.100.0/24" },
    });
    expect(v.actorType).toBe("agent_principal");
    expect(v.principal).toEqual({
      resolved: true,
      operator: "Example Agents Inc.",
      onBehalfOf: "",
      identityBasis: ["web_bot_auth"],
    });
    expect(v.reasons.join(" ")).toMatch(/valid Web Bot Auth signature by Example Agents Inc/);
    // A resolved principal never allows by itself: the automation is explained, the rest is scored.
    expect(v.decision).toBe("allow");
    const event = await t.store.events.get("acme", v.eventId);
    expect(event?.signals.agent).toEqual({
      outcome: "verified",
      keyid: agent.keyid,
      operator: "Example Agents Inc.",
      signatureAgent: AGENT_URL,
    });
  });

  it("a forged signature (one byte flipped): agent_abusive and never allowed", async () => {
    const v = await verify({
      action: "signup",
      subject: { userAgent: BOT_UA, headers: agentHeaders({ flip: true }) },
    });
    expect(v.actorType).toBe("agent_abusive");
    expect(v.decision).not.toBe("allow");
    expect(v.principal.resolved).toBe(false);
    expect(v.reasons[0]).toMatch(/forged or replayed agent/);
  });

  it("a stale signature (expired long ago) is treated like a forgery", async () => {
    const v = await verify({
      action: "signup",
      subject: {
        userAgent: BOT_UA,
        headers: agentHeaders({ created: Math.floor(Date.now() / 1000) - 3600 }),
      },
    });
    expect(v.actorType).toBe("agent_abusive");
    expect(v.reasons.join(" ")).toMatch(/has expired/);
  });

  it("a signature by a key nobody registered: unverified, not agent_principal", async () => {
    const headers = agentRequestHeaders(agent, {
      keyid: "unknown-key",
      privateKey: generateKeyPairSync("ed25519").privateKey,
    });
    const v = await verify({ action: "signup", subject: { userAgent: BOT_UA, headers } });
    expect(v.actorType).not.toBe("agent_principal");
    expect(v.principal.resolved).toBe(false);
    expect(v.reasons.join(" ")).toMatch(/cannot verify it \(the key is not registered with Warden\)/);
  });
});

describe("Web Bot Auth signatures are bound in time and to the tenant's hosts", () => {
  const fixtures = JSON.parse(
    readFileSync(new URL("../../webBotAuth/fixtures/web-bot-auth.json", import.meta.url), "utf8"),
  ) as {
    keys: Record<string, { jwkPublic: object }>;
    vectors: {
      name: string;
      request: { headers: Record<string, string> };
      signatureInput: string;
      signature: string;
    }[];
  };
  const dict = fixtures.vectors.find((v) => v.name === "wba-v2-ed25519-dictionary-agent");
  let hostedKey: string;

  beforeAll(async () => {
    // The public vectors' key, registered as a real operator would be: anyone can replay its signatures.
    const parsed = await parseAgentJwks({ keys: [fixtures.keys["test-key-ed25519"]?.jwkPublic] });
    if (!parsed.ok) throw new Error(parsed.message);
    await t.store.agents.put({
      operator: "Vector Operator",
      signatureAgent: "https://signature-agent.test",
      keys: parsed.keys,
      fetchDirectory: false,
      createdAt: 1,
      updatedAt: 1,
    });
    await t.deps.agents.reload();
    await t.tenant("hosted");
    ({ apiKey: hostedKey } = await t.key("hosted"));
    await t.store.policies.put(
      "hosted",
      JSON.stringify({
        webBotAuthHosts: ["app.example", "*.app.example"],
        // An action whose verified agents are challenged, to reach the step-up.
        actions: { partner_api: { verifiedAgents: "challenge" } },
      }),
      1,
    );
  });

  it("the public vector (valid for 100 years) replayed with a scripted user agent: not verified, never allowed", async () => {
    if (!dict) throw new Error("no vector");
    const headers = {
      ...dict.request.headers,
      "signature-input": dict.signatureInput,
      signature: dict.signature,
      "user-agent": "python-requests/2.32.3",
    };
    const v = await verify({ action: "signup", subject: { userAgent: "python-requests/2.32.3", headers } });
    expect(v.actorType).toBe("agent_abusive");
    expect(v.decision).not.toBe("allow");
    expect(v.principal.resolved).toBe(false);
    expect(v.reasons.join(" ")).toMatch(/valid for 3153600000 s, longer than the 86400 s Warden accepts/);
  });

  it("a signature whose expires is before its created: not verified", async () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = { host: "app.example", "signature-agent": `agent1="${AGENT_URL}"`, "user-agent": BOT_UA };
    const signed = signRequest(headers, agent.privateKey, {
      components: ["@authority", ["signature-agent", { key: "agent1" }]],
      keyid: agent.keyid,
      alg: "ed25519",
      created: now + 30,
      expires: now + 10,
    });
    const v = await verify({
      action: "signup",
      subject: {
        userAgent: BOT_UA,
        headers: { ...headers, signature: signed.signature, "signature-input": signed.signatureInput },
      },
    });
    expect(v.actorType).toBe("agent_abusive");
    expect(v.reasons.join(" ")).toMatch(/expires is not later than created/);
  });

  const hostedVerify = async (host: string): Promise<Verdict> => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(hostedKey),
      payload: {
        action: "signup",
        subject: {
          userAgent: BOT_UA,
          headers: agentRequestHeaders(agent, { extra: { host, "user-agent": BOT_UA } }),
        },
      },
    });
    expect(res.statusCode).toBe(200);
    return res.json<Verdict>();
  };

  it("a tenant with webBotAuthHosts: a signature for one of its hosts (any case, port) verifies", async () => {
    for (const host of ["app.example", "APP.example:8443", "eu.app.example."]) {
      const v = await hostedVerify(host);
      expect(v.actorType, host).toBe("agent_principal");
      expect(v.principal).toMatchObject({ resolved: true, operator: "Example Agents Inc." });
    }
  });

  it("a tenant with webBotAuthHosts: a genuine signature made for another host is a replay, not an identity", async () => {
    const v = await hostedVerify("other-site.example");
    expect(v.actorType).toBe("agent_abusive");
    expect(v.decision).not.toBe("allow");
    expect(v.principal.resolved).toBe(false);
    expect(v.reasons.join(" ")).toMatch(/made for "other-site\.example", not one of the tenant's hosts/);
  });

  it("a tenant with webBotAuthHosts: a step-up proof signed for another host is refused; for its host it clears", async () => {
    const post = (url: string, payload: Record<string, unknown>) =>
      t.app.inject({ method: "POST", url, headers: bearer(hostedKey), payload });
    const headers = agentRequestHeaders(agent, { extra: { "user-agent": BOT_UA } });
    const v = (
      await post("/v1/verify", {
        action: "partner_api",
        session: "s-hosts",
        subject: { userAgent: BOT_UA, headers },
      })
    ).json<Verdict>();
    expect(v.decision).toBe("challenge");
    const issued = await post("/v1/challenge", {
      eventId: v.eventId,
      session: "s-hosts",
      prefer: ["web_bot_auth_stepup"],
    });
    const c = issued.json<{ challengeId: string; method: string; instructions: { nonce: string } }>();
    expect(c.method).toBe("web_bot_auth_stepup");
    const complete = (host: string) =>
      post("/v1/challenge", {
        challengeId: c.challengeId,
        session: "s-hosts",
        proof: {
          method: "web_bot_auth",
          headers: agentRequestHeaders(agent, { nonce: c.instructions.nonce, extra: { host } }),
        },
      });
    const elsewhere = await complete("other-site.example");
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json()).toMatchObject({
      code: "invalid_challenge_proof",
      message: expect.stringMatching(/made for "other-site\.example", not one of the tenant's hosts/),
    });
    expect((await complete("app.example")).statusCode).toBe(200);
  });
});

describe("tenant policy on verify", () => {
  let policyKey: string;
  beforeAll(async () => {
    await t.tenant("strict", { rawPii: true });
    ({ apiKey: policyKey } = await t.key("strict"));
    await t.store.policies.put(
      "strict",
      JSON.stringify({
        deny: { networks: ["203.0.113.0/24"] },
        allow: { emailDomains: ["partner.example"] },
        actions: { api_key: { verifiedAgents: "allow" }, signup: { verifiedAgents: "challenge" } },
      }),
      Date.now(),
    );
  });
  const call = async (body: Record<string, unknown>) => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(policyKey),
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    return res.json<Verdict>();
  };
  const browser = { userAgent: CHROME_UA, headers: CHROME_HEADERS };

  it("a deny-list hit denies, names the entry, and the event records the policy version", async () => {
    const v = await call({ action: "signup", subject: { ...browser, ip: "203.0.113.9" } });
    expect(v.decision).toBe("deny");
    // The model's margin for deny (it would allow this browser): ruleVerdict.happy.test.ts.
    expect(v.confidence).toBe(0);
    expect(v.reasons[0]).toBe("The tenant's deny list names network 203.0.113.0/24.");
    expect((await t.store.events.get("strict", v.eventId))?.policyVersion).toBe("v1");
  });

  it("an allow-list hit on the email domain allows a request the model would challenge", async () => {
    const v = await call({
      action: "signup",
      subject: { userAgent: "curl/8.5.0", email: "ops@partner.example" },
    });
    expect(v.decision).toBe("allow");
    expect(v.reasons[0]).toBe("The tenant's allow list names email domain partner.example.");
  });

  it("per-action rules for verified agents: allowed for api_key, challenged for signup", async () => {
    const subject = { userAgent: BOT_UA, headers: agentHeaders() };
    expect((await call({ action: "api_key", subject })).decision).toBe("allow");
    const signup = await call({ action: "signup", subject: { ...subject, headers: agentHeaders() } });
    expect(signup.decision).toBe("challenge");
    expect(signup.actorType).toBe("agent_principal");
  });

  it("a business email domain is attribution (onBehalfOf) but does not resolve the principal", async () => {
    const v = await call({
      action: "demo_request",
      subject: { ...browser, email: "ann@acme-industries.com" },
    });
    expect(v.principal).toEqual({
      resolved: false,
      operator: "",
      onBehalfOf: "acme-industries.com",
      identityBasis: ["email_domain"],
    });
    const free = await call({ action: "demo_request", subject: { ...browser, email: "ann@gmail.com" } });
    expect(free.principal.identityBasis).toEqual([]);
  });

  it("a tenant's per-minute limit adds a minute window to the built-in ones", async () => {
    await t.tenant("bursty");
    const { apiKey: key } = await t.key("bursty");
    await t.store.policies.put(
      "bursty",
      JSON.stringify({ velocity: { session: { perMinute: 2 } } }),
      Date.now(),
    );
    let last: Verdict | undefined;
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(key),
        payload: { action: "signup", session: "same-session", subject: browser },
      });
      last = res.json<Verdict>();
    }
    expect(last?.reasons.join(" ")).toMatch(
      /This session made about 3 signup attempts in the last minute, above the limit of 2/,
    );
  });

  it("plus and dot variants of one Gmail mailbox are counted together", async () => {
    const variants = [
      "jane.doe@gmail.com",
      "janedoe+1@gmail.com",
      "j.a.n.e.doe+2@gmail.com",
      "jane.d.oe@googlemail.com",
    ];
    let last: Verdict | undefined;
    for (const email of variants)
      last = await call({ action: "trial_activation", subject: { ...browser, email } });
    expect(last?.reasons.join(" ")).toMatch(
      /This mailbox \(counting its \+tag and dot variants\) made about 4/,
    );
  });

  it("rules in IPv4-mapped form match IPv4 subjects; operator names match with stray spaces trimmed", async () => {
    await t.tenant("mapped", { rawPii: true });
    const { apiKey: key } = await t.key("mapped");
    await t.store.policies.put(
      "mapped",
      JSON.stringify({
        deny: { networks: ["::ffff:203.0.113.0/120", "::ffff:198.51.100.5"] },
        allow: { agentOperators: [" Example Agents Inc. "] },
      }),
      Date.now(),
    );
    const mappedCall = async (subject: Record<string, unknown>) => {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(key),
        payload: { action: "signup", subject },
      });
      expect(res.statusCode).toBe(200);
      return res.json<Verdict>();
    };
    const truncated = await mappedCall({ ...browser, ipTrunc: "203.0.113.0/24" });
    expect(truncated.decision).toBe("deny");
    expect(truncated.reasons[0]).toBe("The tenant's deny list names network ::ffff:203.0.113.0/120.");
    const raw = await mappedCall({ ...browser, ip: "::ffff:198.51.100.5" });
    expect(raw.decision).toBe("deny");
    expect(raw.reasons[0]).toBe("The tenant's deny list names network ::ffff:198.51.100.5.");
    const listed = await mappedCall({ userAgent: BOT_UA, headers: agentHeaders() });
    expect(listed.decision).toBe("allow");
    expect(listed.reasons[0]).toBe("The tenant's allow list names agent operator Example Agents Inc..");
  });
});
