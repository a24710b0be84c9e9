import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import { emailHash } from "./signals/email.js";

let t: TestApp;
let key: string;
let baseUrl: string;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
  // A real listening server: the token test fetches the key set over HTTP like a receiver would.
  baseUrl = await t.app.listen({ host: "127.0.0.1", port: 0 });
});
afterAll(() => t.close());

async function verify(payload: unknown, headers: Record<string, string> = bearer(key)) {
  const res = await fetch(`${baseUrl}/v1/verify`, { method: "POST", headers, body: JSON.stringify(payload) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const human = {
  action: "signup",
  subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "198.51.100.0/24" },
};
const script = { action: "signup", subject: { userAgent: "python-requests/2.31.0" } };

describe("the Verdict", () => {
  it("has every required field with its type, and no challengeCleared", async () => {
    const { status, body } = await verify(human);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(
      [
        "actorType",
        "confidence",
        "decision",
        "degraded",
        "enforcementMode",
        "eventId",
        "principal",
        "reasons",
        "reasonDetails",
        "verdictToken",
      ].sort(),
    );
    expect(body.decision).toBe("allow");
    expect(body.actorType).toBe("human");
    expect(body.degraded).toBe(false);
    expect(body.enforcementMode).toBe("enforce");
    expect(body.confidence).toBeGreaterThanOrEqual(0);
    expect(body.confidence).toBeLessThanOrEqual(1);
    expect(body.principal).toEqual({ resolved: false, operator: "", onBehalfOf: "", identityBasis: [] });
    expect(body.eventId).toMatch(/^evt_[A-Za-z0-9_-]{30}$/);
    expect((body.reasons as string[]).length).toBeGreaterThan(0);
  });

  it("challenges a scripted client and says why", async () => {
    const { body } = await verify(script);
    expect(body.decision).toBe("challenge");
    expect(body.actorType).toBe("agent_abusive");
    expect((body.reasons as string[])[0]).toMatch(/automation tool/);
    expect(body).not.toHaveProperty("challengeCleared");
  });

  it("the quick start's request (README): challenged as agent_abusive with the confidence it documents, the smaller of its margins over allow and deny", async () => {
    const { body } = await verify({
      action: "signup",
      session: "sess-42",
      subject: { userAgent: "curl/8.5.0", ipTrunc: "203.0.113.0/24" },
    });
    expect(body).toMatchObject({ decision: "challenge", actorType: "agent_abusive", confidence: 0.303 });
    expect((body.reasons as string[]).at(-1)).toBe(
      "Estimated abuse risk 74% (range 54%–88%); challenge had the lowest expected cost with weights falseAllow 1, falseChallenge 1, falseDeny 3.",
    );
  });

  it("denies strong evidence of abuse and never calls thin evidence human", async () => {
    const pii = await t.tenant("pii", { rawPii: true });
    const piiKey = (await t.key(pii)).apiKey;
    const { body } = await verify(
      { action: "signup", subject: { userAgent: "curl/8.5.0", email: "x@mailinator.com" } },
      bearer(piiKey),
    );
    expect(body.decision).toBe("deny");
    const thin = await verify({ action: "signup", subject: { userAgent: CHROME_UA } });
    expect(thin.body.actorType).toBe("unknown");
  });

  it("accepts any action string and tolerates unknown members", async () => {
    const { status } = await verify({
      action: "export_all_the_things",
      subject: { extra: 1 },
      extra: true,
      context: { any: "thing" },
    });
    expect(status).toBe(200);
  });

  it("lets decisionCosts move the boundaries: a high falseAllow challenges what defaults allow", async () => {
    const plain = { action: "signup", subject: { userAgent: CHROME_UA } };
    expect((await verify(plain)).body.decision).toBe("allow");
    const strict = await verify({ ...plain, context: { decisionCosts: { falseAllow: 20 } } });
    expect(strict.body.decision).toBe("challenge");
    // Invalid fields fall back to defaults instead of failing the request.
    expect(
      (await verify({ ...plain, context: { decisionCosts: { falseAllow: "lots", falseDeny: -1 } } })).body
        .decision,
    ).toBe("allow");
  });
});

describe("verdictToken", () => {
  it("verifies with jose against the served key set, with iss, aud, tid, sub and the decision claims", async () => {
    const { body } = await verify({ ...script, session: "sess-123" });
    const jwks = createRemoteJWKSet(new URL(`${baseUrl}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(body.verdictToken as string, jwks, {
      issuer: t.deps.config.tokenIssuer,
      audience: t.deps.config.tokenAudience,
      algorithms: ["ES256"],
    });
    expect(protectedHeader.alg).toBe("ES256");
    expect(protectedHeader.kid).toBe(t.deps.keyring.activeSigner().kid);
    expect(payload.tid).toBe("acme");
    expect(payload.sub).toBe("sess-123");
    expect(payload.jti).toBe(body.eventId);
    expect(payload).toMatchObject({
      decision: "challenge",
      actorType: "agent_abusive",
      degraded: false,
      action: "signup",
    });
    expect(payload).not.toHaveProperty("enforcementMode");
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(t.deps.config.tokenTtlSeconds);
  });

  it("uses the eventId as sub when no session is given", async () => {
    const { body } = await verify(script);
    const jwks = createRemoteJWKSet(new URL(`${baseUrl}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(body.verdictToken as string, jwks);
    expect(payload.sub).toBe(body.eventId);
  });

  it("fails verification when tampered with", async () => {
    const { body } = await verify(script);
    const token = body.verdictToken as string;
    const [h, p, s] = token.split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p ?? "", "base64url").toString()), decision: "allow" }),
    ).toString("base64url");
    const jwks = createRemoteJWKSet(new URL(`${baseUrl}/.well-known/jwks.json`));
    await expect(jwtVerify(`${h}.${forged}.${s}`, jwks)).rejects.toThrow();
    expect(decodeProtectedHeader(token).kid).toBeDefined();
  });
});

describe("enforcementMode", () => {
  it("is log_only when context.logOnly is true: decision allow, the would-be decision named and recorded", async () => {
    const { body } = await verify({ ...script, context: { logOnly: true } });
    expect(body.enforcementMode).toBe("log_only");
    expect(body.decision).toBe("allow");
    expect((body.reasons as string[])[0]).toMatch(/Log-only mode.*would have been challenge/);
    const event = await t.store.events.get("acme", body.eventId as string);
    expect(event).toMatchObject({
      decision: "allow",
      wouldBeDecision: "challenge",
      enforcementMode: "log_only",
    });
  });

  it("is log_only when the tenant or the key says so", async () => {
    await t.tenant("observer", { logOnly: true });
    const tenantKey = (await t.key("observer")).apiKey;
    expect((await verify(script, bearer(tenantKey))).body.enforcementMode).toBe("log_only");
    const keyOnly = (await t.key("acme", { logOnly: true })).apiKey;
    const viaKey = await verify(script, bearer(keyOnly));
    expect(viaKey.body.enforcementMode).toBe("log_only");
    expect(viaKey.body.decision).toBe("allow");
  });

  it("is enforce otherwise, and context.logOnly false does not override a log_only tenant", async () => {
    expect((await verify(script)).body.enforcementMode).toBe("enforce");
    const tenantKey = (await t.key("observer")).apiKey;
    expect(
      (await verify({ ...script, context: { logOnly: false } }, bearer(tenantKey))).body.enforcementMode,
    ).toBe("log_only");
  });
});

describe("the event record", () => {
  it("holds the decision and its grounds with protected signals only", async () => {
    const { body } = await verify({
      ...human,
      surface: "app.example.com/signup",
      session: "s-1",
      subject: { ...human.subject, emailSha256: emailHash("a@b.co") },
    });
    const event = await t.store.events.get("acme", body.eventId as string);
    expect(event).toMatchObject({
      tenantId: "acme",
      action: "signup",
      surface: "app.example.com/signup",
      session: "s-1",
      decision: "allow",
      wouldBeDecision: "allow",
      actorType: "human",
      degraded: false,
      enforcementMode: "enforce",
      costs: { falseAllow: 1, falseChallenge: 1, falseDeny: 3 },
      engineVersion: expect.any(String),
      policyVersion: expect.any(String),
      reasons: body.reasons,
      confidence: body.confidence,
    });
    expect(event?.signals).toMatchObject({ ipNetwork: "198.51.100.0/24", emailSha256: emailHash("a@b.co") });
    expect(event?.keyId).toMatch(/^key_/);
  });

  it("is invisible to another tenant", async () => {
    const { body } = await verify(script);
    expect(await t.store.events.get("pii", body.eventId as string)).toBeUndefined();
  });
});

describe("velocity per tenant on the truncated network and the email hash", () => {
  it("turns a burst from one email hash into evidence that raises the decision", async () => {
    await t.tenant("burst");
    const burstKey = (await t.key("burst")).apiKey;
    const attempt = {
      action: "signup",
      subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, emailSha256: emailHash("farm@example.org") },
    };
    const decisions: string[] = [];
    for (let i = 0; i < 12; i++)
      decisions.push((await verify(attempt, bearer(burstKey))).body.decision as string);
    expect(decisions[0]).toBe("allow");
    expect(decisions.at(-1)).not.toBe("allow");
    const last = await verify(attempt, bearer(burstKey));
    expect((last.body.reasons as string[]).join(" ")).toMatch(
      /This email address made about 13 signup attempts/,
    );
    // Another tenant's counters are separate.
    expect((await verify(attempt)).body.decision).toBe("allow");
  });
});

describe("idempotency", () => {
  it("same key and same payload replays the original response unchanged", async () => {
    const h = { ...bearer(key), "idempotency-key": "replay-1" };
    const first = await verify(script, h);
    const second = await verify(script, h);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
  });

  it("key order in the request does not change the fingerprint", async () => {
    const h = { ...bearer(key), "idempotency-key": "order-1" };
    const first = await verify(
      { action: "signup", subject: { userAgent: "curl/8", ipTrunc: "192.0.2.0/24" } },
      h,
    );
    const second = await verify(
      { subject: { ipTrunc: "192.0.2.0/24", userAgent: "curl/8" }, action: "signup" },
      h,
    );
    expect(second.status).toBe(200);
    expect(second.body.eventId).toBe(first.body.eventId);
  });

  it("the body idempotencyKey is excluded from the fingerprint and the header wins over it", async () => {
    const viaBody = await verify({ ...script, idempotencyKey: "body-1" });
    expect((await verify({ ...script, idempotencyKey: "body-1" })).body.eventId).toBe(viaBody.body.eventId);
    const viaHeader = await verify(
      { ...script, idempotencyKey: "body-1" },
      { ...bearer(key), "idempotency-key": "header-1" },
    );
    expect(viaHeader.body.eventId).not.toBe(viaBody.body.eventId);
    expect(
      (
        await verify(
          { ...script, idempotencyKey: "something-else" },
          { ...bearer(key), "idempotency-key": "header-1" },
        )
      ).body.eventId,
    ).toBe(viaHeader.body.eventId);
  });

  it("concurrent requests with one key produce exactly one event and one answer", async () => {
    const h = { ...bearer(key), "idempotency-key": "concurrent-1" };
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(script, h)));
    const ids = new Set(answers.map((a) => a.body.eventId));
    const tokens = new Set(answers.map((a) => a.body.verdictToken));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(ids.size).toBe(1);
    expect(tokens.size).toBe(1);
  });

  it("keys are scoped per tenant", async () => {
    const otherKey = (await t.key("pii")).apiKey;
    const a = await verify(script, { ...bearer(key), "idempotency-key": "shared-name" });
    const b = await verify(
      { ...script, action: "other" },
      { ...bearer(otherKey), "idempotency-key": "shared-name" },
    );
    expect(b.status).toBe(200);
    expect(b.body.eventId).not.toBe(a.body.eventId);
  });
});

describe("around verify", () => {
  it("serves /healthz, /readyz, the OpenAPI document generated from the route schemas, and the reference page", async () => {
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${baseUrl}/readyz`)).json()).toMatchObject({ ok: true, store: "up" });
    const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const op = doc.paths["/v1/verify"]?.post as {
      requestBody: { content: Record<string, { schema: { required: string[] } }> };
    };
    expect(op.requestBody.content["application/json"]?.schema.required).toEqual(["action", "subject"]);
    const page = await fetch(`${baseUrl}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/swagger/i);
  });

  it("returns a request id on every response", async () => {
    const { headers } = await verify(script);
    expect(headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
