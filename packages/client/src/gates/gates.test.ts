import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solvePow } from "../../../server/src/operations/challenge/methods/proofOfWork/proofOfWork.js";
import { CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../../server/src/testing/harness.js";
import { WardenClient } from "../client.js";
import { wardenRoute as nextRoute, wardenChallengeRoute } from "../next.js";
import { verifyVerdictToken } from "../verdictToken.js";
import type { GateOptions, GateVerdict } from "./core.js";
import { wardenChallengeRoutes, wardenGate } from "./express.js";
import { registerWardenChallengeRoutes, wardenPreHandler } from "./fastify.js";
import { wardenChallengeRouteHandlers, wardenRoute } from "./fetch.js";
import { wardenChallengeHandlers, wardenMiddleware } from "./hono.js";

/**
 * The gates for Express, Fastify, Hono, the Fetch API and Next.js against a real Warden: allow continues with the verdict
 * attached, challenge answers 428 with a ticket that the challenge routes accept and that brings the
 * pending form back after the re-verify, deny answers 403, and a Warden that cannot be reached is a
 * 428 to try again (never an allow).
 */
let warden: TestApp;
let baseUrl: string;
let apiKey: string;
const SECRET = "a-ticket-secret-of-at-least-32-characters";
const servers: { close(): unknown }[] = [];

beforeAll(async () => {
  warden = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "100000" } });
  await warden.tenant("acme");
  ({ apiKey } = await warden.key("acme"));
  await warden.store.policies.put(
    "acme",
    JSON.stringify({ deny: { networks: ["198.51.100.0/24"] } }),
    Date.now(),
  );
  baseUrl = await warden.app.listen({ host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await warden.close();
});

/** A client as an app configures one: its tenant, and the issuer and audience this Warden signs with. */
const clientOf = (key: string, tenantId: string) =>
  new WardenClient({
    baseUrl,
    apiKey: key,
    tenantId,
    tokenIssuer: warden.deps.config.tokenIssuer,
    tokenAudience: warden.deps.config.tokenAudience,
    verifyTimeoutMs: 5000,
  });

/** The tenant's newest event, whole (the list's rows carry no signals). */
async function latestEvent(tenant: string) {
  const [item] = await warden.store.insights.listEvents(tenant, { since: 0, until: Date.now() + 1 }, 1);
  return item ? warden.store.events.get(tenant, item.id) : undefined;
}

const gateOptions = (client: WardenClient): GateOptions => ({
  client,
  action: "signup",
  ticketSecret: SECRET,
  email: (body) => body.email,
  pending: (body) => ({ email: body.email }),
  trustedProxies: ["127.0.0.1"],
});
const answerOf = (warden: GateVerdict | undefined) => ({
  decision: warden?.verdict.decision,
  cleared: warden?.verdict.challengeCleared === true,
  pending: warden?.pending ?? null,
  receipt: warden?.receipt ?? null,
  eventId: warden?.eventId ?? null,
});

async function expressApp(client: WardenClient): Promise<string> {
  const app = express();
  app.use(express.json());
  app.use(wardenChallengeRoutes({ client, ticketSecret: SECRET, trustedProxies: ["127.0.0.1"] }));
  app.post("/signup", wardenGate(gateOptions(client)), (req, res) => {
    res.json(answerOf((req as unknown as { warden?: GateVerdict }).warden));
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function fastifyApp(client: WardenClient): Promise<string> {
  const app = Fastify();
  // What wardenFastify does (this app registers the routes itself); typed by @warden/client/fastify.
  app.decorateRequest("warden", null as unknown as GateVerdict);
  registerWardenChallengeRoutes(app as never, {
    client,
    ticketSecret: SECRET,
    trustedProxies: ["127.0.0.1"],
  });
  app.post("/signup", { preHandler: wardenPreHandler(gateOptions(client)) as never }, async (req) =>
    answerOf((req as unknown as { warden?: GateVerdict }).warden),
  );
  servers.push(app);
  return app.listen({ host: "127.0.0.1", port: 0 });
}

async function honoApp(client: WardenClient): Promise<string> {
  const app = new Hono<{ Variables: { warden: GateVerdict } }>();
  const handlers = wardenChallengeHandlers({ client, ticketSecret: SECRET, trustedProxies: ["127.0.0.1"] });
  app.post("/warden/challenge/page", handlers.page as never);
  app.post("/warden/challenge/issue", handlers.issue as never);
  app.post("/warden/challenge/complete", handlers.complete as never);
  app.post("/signup", wardenMiddleware(gateOptions(client)) as never, (c) =>
    c.json(answerOf(c.get("warden"))),
  );
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((r) => server.once("listening", r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The fetch-API gate and challenge routes, one route handler per path as in a Next.js app. */
async function fetchApp(client: WardenClient): Promise<string> {
  const peer = { remoteAddress: () => "127.0.0.1" };
  const handlers = wardenChallengeRouteHandlers({
    client,
    ticketSecret: SECRET,
    trustedProxies: ["127.0.0.1"],
    ...peer,
  });
  const routes: Record<string, (request: Request) => Promise<Response>> = {
    "/signup": wardenRoute({ ...gateOptions(client), ...peer }, async (_request, warden) =>
      Response.json(answerOf(warden)),
    ),
    "/warden/challenge/page": handlers.page,
    "/warden/challenge/issue": handlers.issue,
    "/warden/challenge/complete": handlers.complete,
  };
  const server = serve({
    fetch: (request: Request) =>
      routes[new URL(request.url).pathname]?.(request) ?? new Response(null, { status: 404 }),
    port: 0,
    hostname: "127.0.0.1",
  });
  await new Promise((r) => server.once("listening", r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * @warden/client/next's route files: the client's address from the last X-Forwarded-For entry (what
 * the proxy in front appended; here the test's header itself), the challenge routes in one handler.
 */
async function nextApp(client: WardenClient): Promise<string> {
  const challenge = wardenChallengeRoute({ client, ticketSecret: SECRET, trustedProxies: ["127.0.0.1"] });
  const signup = nextRoute(gateOptions(client), async (_request, warden) => Response.json(answerOf(warden)));
  const server = serve({
    fetch: (request: Request) => {
      const path = new URL(request.url).pathname;
      return path === "/signup" ? signup(request) : challenge(request);
    },
    port: 0,
    hostname: "127.0.0.1",
  });
  await new Promise((r) => server.once("listening", r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A POST with exactly `headers` (undici's request: fetch() would add a Sec-Fetch-Mode of its own, half
 * a Sec-Fetch-* group, which Warden reads as a program's).
 */
const post = async (url: string, body: unknown, headers: Record<string, string>) => {
  const res = await request(url, {
    // A connection per request: a kept-alive one the app's server closes meanwhile resets the next.
    reset: true,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const retryAfter = res.headers["retry-after"];
  return {
    status: res.statusCode,
    retryAfter: typeof retryAfter === "string" ? retryAfter : null,
    json: (await res.body.json()) as Record<string, unknown>,
  };
};
/** A page's fetch() of the form, as Chromium sends it: a navigation's headers with a fetch's metadata. */
const PAGE_FETCH: Record<string, string> = Object.fromEntries(
  Object.entries({
    ...(CHROME_HEADERS as Record<string, string>),
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "cors",
    "sec-fetch-dest": "empty",
  }).filter(([name]) => name !== "sec-fetch-user" && name !== "upgrade-insecure-requests"),
);
const browser = (network: string) => ({
  ...PAGE_FETCH,
  "user-agent": CHROME_UA,
  "x-forwarded-for": network,
});
const script = (network: string) => ({ "user-agent": "curl/8.5.0", "x-forwarded-for": network });
/**
 * A client that sends an empty user agent (fetch would otherwise send its own): challenged without
 * automation evidence, so its proof of work is the default tier's; an automation user agent's
 * challenge is sealed severe (difficulty 6, tens of seconds for solvePow).
 */
const anonymous = (network: string) => ({ "user-agent": "", "x-forwarded-for": network });

describe.each([
  ["Express", expressApp],
  ["Fastify", fastifyApp],
  ["Hono", honoApp],
  ["fetch-API", fetchApp],
  ["Next.js", nextApp],
])("the %s gate", (name, start) => {
  // Each gate's attempts carry addresses of their own: one address across the four would meet the
  // email's velocity (3 an hour) by the last, and its challenge a higher tier.
  const bob = `bob.${name.toLowerCase()}@example.org`;
  let app: string;
  let client: WardenClient;
  beforeAll(async () => {
    client = clientOf(apiKey, "acme");
    app = await start(client);
  });

  it("allow: the handler runs with the verdict attached, its token checked by the gate", async () => {
    const res = await post(`${app}/signup`, { email: "ann@example.org" }, browser("81.2.10.7"));
    expect(res).toMatchObject({ status: 200, json: { decision: "allow", cleared: false, pending: null } });
    expect(res.json.receipt).toMatchObject({ tid: "acme", action: "signup", decision: "allow" });
    expect((res.json.receipt as { jti: string }).jti).toBe(res.json.eventId);
  });

  it("a client configured with another tenant's id: Warden allows, the gate refuses the receipt (403 receipt_invalid)", async () => {
    const other = await start(clientOf(apiKey, "someone-else"));
    const res = await post(`${other}/signup`, { email: "ann@example.org" }, browser("81.2.10.8"));
    expect(res).toMatchObject({ status: 403, json: { code: "receipt_invalid" } });
  });

  it("challenge: 428 with a ticket; the challenge routes issue and complete on it; the re-submitted form is allowed with the pending data", async () => {
    const first = await post(`${app}/signup`, { email: bob }, anonymous("81.2.11.7"));
    expect(first).toMatchObject({
      status: 428,
      json: { error: "challenge_required", code: "warden_challenge" },
    });
    const ticket = first.json.ticket as string;
    const issued = await post(`${app}/warden/challenge/issue`, { wardenTicket: ticket }, {});
    expect(issued).toMatchObject({ status: 200, json: { method: "proof_of_work" } });
    const { seed, difficulty } = issued.json.instructions as { seed: string; difficulty: number };
    const challengeId = issued.json.challengeId as string;
    const wrong = await post(
      `${app}/warden/challenge/complete`,
      { wardenTicket: ticket, challengeId, proof: { nonce: "x" } },
      {},
    );
    expect(wrong).toMatchObject({ status: 400, json: { code: "invalid_challenge_proof" } });
    const { nonce } = solvePow(seed, difficulty);
    const done = await post(
      `${app}/warden/challenge/complete`,
      { wardenTicket: ticket, challengeId, proof: { nonce } },
      {},
    );
    expect(done).toMatchObject({ status: 200, json: { ok: true } });
    // The re-submitted form carries only the ticket and the challengeId; the gate re-verifies the same attempt.
    const again = await post(
      `${app}/signup`,
      { wardenTicket: ticket, wardenChallengeId: challengeId },
      anonymous("81.2.11.7"),
    );
    expect(again).toMatchObject({
      status: 200,
      json: { decision: "allow", cleared: true, pending: { email: bob } },
    });
  });

  it("page evidence: the page route hands out a page token bound to the client, with the proof of work its challenge would be sealed with; the gate forwards the form's report as subject.page", async () => {
    const tokenRes = await post(`${app}/warden/challenge/page`, {}, browser("81.2.11.7"));
    expect(tokenRes.status).toBe(200);
    const token = tokenRes.json.pageToken as string;
    expect(token).toMatch(/^wpt1\./);
    const pow = tokenRes.json.pow as { seed: string };
    expect(pow).toEqual({
      type: "pow",
      seed: expect.stringMatching(/^[0-9a-f]{32}$/),
      difficulty: 6,
      algorithm: "sha256-prefix",
    });
    // A form sent at once with the token: Warden reads it (fast), so the gate forwarded it.
    const res = await post(
      `${app}/signup`,
      {
        email: "page@example.org",
        wardenPage: { token, behaviour: { keys: 0, inserted: 2, pointerMoves: 1, clicks: 1, bogus: "x" } },
      },
      browser("81.2.11.7"),
    );
    expect(res.status).toBe(403);
    const event = await latestEvent("acme");
    const findings = ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
    expect(findings).toEqual(
      expect.arrayContaining(["page_submitted_fast", "page_input_without_keys", "page_pointer_teleported"]),
    );
    // Verify read the page's seed from the token: a challenge on this attempt would be sealed with it.
    expect(event?.signals.page).toMatchObject({ powSeed: pow.seed });
    // A report the gate cannot read is dropped, not sent (Warden would refuse the whole verify).
    const odd = await post(
      `${app}/signup`,
      { email: "odd@example.org", wardenPage: { token: 7, behaviour: { keys: -1 } } },
      browser("81.2.12.7"),
    );
    expect(odd.json).toMatchObject({ decision: "allow" });
  });

  it("a body the gate cannot read as an object is refused (415), never gated as empty while the handler reads it", async () => {
    for (const [type, text] of [
      ["text/plain", JSON.stringify({ email: "bot@example.org" })],
      ["application/json", JSON.stringify([{ email: "bot@example.org" }])],
    ] as const) {
      const res = await fetch(`${app}/signup`, {
        method: "POST",
        headers: { "content-type": type, ...browser("81.2.30.7") },
        body: text,
      });
      expect(res.status).toBe(415);
    }
  });

  it("a JSON form sent with a page load's Fetch Metadata (copied navigation headers) is not allowed", async () => {
    const res = await post(
      `${app}/signup`,
      { email: "copy@example.org" },
      { ...CHROME_HEADERS, "user-agent": CHROME_UA, "x-forwarded-for": "81.2.40.7" },
    );
    expect(res.status).not.toBe(200);
    const event = await latestEvent("acme");
    expect(((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id)).toContain(
      "fetch_metadata_navigation_json",
    );
  });

  it("an email that is not a string is 400 invalid_email, never scored as no email", async () => {
    for (const email of [["eve@example.org"], { a: "eve@example.org" }, 42]) {
      const res = await post(`${app}/signup`, { email }, browser("81.2.14.7"));
      expect(res).toMatchObject({ status: 400, json: { error: "bad_request", code: "invalid_email" } });
    }
  });

  it("deny: 403 warden_denied (the client network, read behind the trusted proxy, is on the tenant's deny list)", async () => {
    const res = await post(`${app}/signup`, { email: "eve@example.org" }, browser("198.51.100.9"));
    expect(res).toMatchObject({ status: 403, json: { error: "forbidden", code: "warden_denied" } });
  });

  it("a forged or altered ticket is refused by the challenge routes and starts a fresh attempt at the gate", async () => {
    const forged = await post(
      `${app}/warden/challenge/issue`,
      { wardenTicket: "eyJhbGciOiJIUzI1NiJ9.e30.x" },
      {},
    );
    expect(forged).toMatchObject({ status: 400, json: { code: "invalid_ticket" } });
    const res = await post(
      `${app}/signup`,
      { wardenTicket: "nope", wardenChallengeId: "chl_x" },
      script("81.2.12.7"),
    );
    expect(res).toMatchObject({ status: 428, json: { code: "warden_challenge" } });
  });
});

describe("a gate with rawEmail, for a tenant that opted in to raw PII", () => {
  it("sends the address itself, so the disposable-address rule applies; the hash alone cannot show the domain", async () => {
    await warden.tenant("rawpii", { rawPii: true });
    const { apiKey: rawKey } = await warden.key("rawpii");
    const client = clientOf(rawKey, "rawpii");
    const findingsFor = async (rawEmail: boolean, network: string) => {
      const app = express();
      app.use(express.json());
      app.post("/signup", wardenGate({ ...gateOptions(client), rawEmail }), (_req, res) => {
        res.json({});
      });
      const server = app.listen(0, "127.0.0.1");
      await new Promise((r) => server.once("listening", r));
      servers.push(server);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await post(`${url}/signup`, { email: "Bot@Mailinator.com" }, browser(network));
      const event = await latestEvent("rawpii");
      return ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
    };
    expect(await findingsFor(false, "81.2.20.7")).not.toContain("email_disposable");
    expect(await findingsFor(true, "81.2.21.7")).toContain("email_disposable");
  });
});

describe("a gate's onVerdict hook and support references", () => {
  it("tells the app every verdict; the 403 and 428 carry the attempt's eventId; a throwing hook fails the request (Express's 500)", async () => {
    const client = clientOf(apiKey, "acme");
    const seen: import("./core.js").VerdictSeen[] = [];
    const app = express();
    app.use(express.json());
    let throwing = false;
    app.post(
      "/signup",
      wardenGate({
        ...gateOptions(client),
        onVerdict: (v) => {
          seen.push(v);
          if (throwing) throw new Error("the app's logger failed");
        },
      }),
      (_req, res) => {
        res.status(201).json({});
      },
    );
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const denied = await post(`${url}/signup`, { email: "eve@example.org" }, browser("198.51.100.9"));
    expect(denied).toMatchObject({ status: 403, json: { code: "warden_denied" } });
    const challenged = await post(`${url}/signup`, { email: "bot@example.org" }, script("81.2.30.7"));
    expect(challenged).toMatchObject({ status: 428, json: { code: "warden_challenge" } });
    expect(seen.map((v) => v.decision)).toEqual(["deny", "challenge"]);
    expect(denied.json.reference).toBe(seen[0]?.eventId);
    expect(challenged.json.reference).toBe(seen[1]?.eventId);
    expect(seen[0]).toMatchObject({ action: "signup", degraded: false, challengeCleared: false });
    expect(seen[0]?.reasons.length).toBeGreaterThan(0);
    expect(seen[0]?.session).toMatch(/\S/);

    throwing = true;
    const again = await fetch(`${url}/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", ...browser("198.51.100.10") },
      body: JSON.stringify({ email: "eve@example.org" }),
    });
    expect(again.status).toBe(500);
    expect(seen).toHaveLength(3);
  });
});

describe("gates when Warden cannot be reached", () => {
  it("answer 428 warden_unavailable with Retry-After: fail closed, no ticket, never allow", async () => {
    const client = new WardenClient({
      baseUrl: "http://127.0.0.1:9",
      apiKey: "wdn_x",
      tenantId: "acme",
      verifyTimeoutMs: 500,
    });
    for (const start of [expressApp, fastifyApp, honoApp, fetchApp, nextApp]) {
      const app = await start(client);
      const res = await post(`${app}/signup`, { email: "ann@example.org" }, browser("81.2.13.7"));
      expect(res).toMatchObject({
        status: 428,
        retryAfter: "5",
        json: { code: "warden_unavailable", retryAfterSeconds: 5 },
      });
      expect(res.json.ticket).toBeUndefined();
    }
  });
});

describe("verifyVerdictToken", () => {
  it("checks signature, iss, aud, tid, sub and the decision against the published key set", async () => {
    const client = new WardenClient({ baseUrl, apiKey, verifyTimeoutMs: 5000 });
    const verdict = await client.verify({
      action: "signup",
      session: "sess-token-1",
      subject: {
        userAgent: CHROME_UA,
        headers: { ...CHROME_HEADERS, "user-agent": CHROME_UA },
        ipTrunc: "81.2.14.0/24",
      },
    });
    if (verdict.local) throw new Error("verify failed locally");
    const expect_ = {
      jwks: `${baseUrl}/.well-known/jwks.json`,
      issuer: warden.deps.config.tokenIssuer,
      audience: warden.deps.config.tokenAudience,
      tenantId: "acme",
      subject: "sess-token-1",
    };
    expect(await verifyVerdictToken(verdict.verdictToken, expect_)).toMatchObject({
      ok: true,
      claims: { tid: "acme", sub: "sess-token-1", decision: verdict.decision },
    });
    expect((await verifyVerdictToken(verdict.verdictToken, { ...expect_, action: "signup" })).ok).toBe(true);
    for (const [change, reason] of [
      [{ tenantId: "other" }, /tid/],
      [{ subject: "another-session" }, /sub/],
      [{ issuer: "https://elsewhere" }, /iss/],
      [{ audience: "someone-else" }, /aud/],
      [{ decisions: [verdict.decision === "allow" ? "deny" : "allow"] }, /not accepted/],
      [{ action: "newsletter" }, /action/],
    ] as const) {
      const check = await verifyVerdictToken(verdict.verdictToken, { ...expect_, ...change });
      expect(check.ok).toBe(false);
      expect(check.ok ? "" : check.reason).toMatch(reason);
    }
    const tampered = `${verdict.verdictToken.slice(0, -4)}AAAA`;
    expect((await verifyVerdictToken(tampered, expect_)).ok).toBe(false);
  });
});
