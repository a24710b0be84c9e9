import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solvePow } from "../../server/src/operations/challenge/methods/proofOfWork/proofOfWork.js";
import { CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../server/src/testing/harness.js";
import type { VerdictSeen } from "./gates/core.js";
import {
  clientFromEnv,
  forwardedClientAddress,
  type NextGateOptions,
  WardenClient,
  wardenChallengeRoute,
  wardenRoute,
} from "./next.js";

/**
 * `@warden/client/next` against a real Warden, its route handlers called with the `Request` Next.js
 * hands a route file: the client comes from the environment on the first request (never when the
 * route is loaded, as by `next build`), the client's address is the last X-Forwarded-For entry (the
 * one the proxy in front appended), and the answers are the Fetch-API gate's.
 */
let warden: TestApp;
let baseUrl: string;
let apiKey: string;
const SECRET = "a-ticket-secret-of-at-least-32-characters";
const ENV = ["WARDEN_URL", "WARDEN_API_KEY", "WARDEN_TENANT", "WARDEN_TICKET_SECRET"];
const TOKEN_ENV = ["WARDEN_TOKEN_ISSUER", "WARDEN_TOKEN_AUDIENCE", "WARDEN_VERIFY_TIMEOUT_MS"];
const saved = Object.fromEntries([...ENV, ...TOKEN_ENV].map((name) => [name, process.env[name]]));

beforeAll(async () => {
  for (const name of [...ENV, ...TOKEN_ENV]) delete process.env[name];
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
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await warden.close();
});

const APP = "http://shop.test";
/** A page's fetch() of the form, as Chromium sends it, through a proxy that appended `forwardedFor`. */
const pageFetch = (forwardedFor: string): Record<string, string> => ({
  ...Object.fromEntries(
    Object.entries(CHROME_HEADERS as Record<string, string>).filter(
      ([name]) => name !== "sec-fetch-user" && name !== "upgrade-insecure-requests",
    ),
  ),
  "sec-fetch-site": "same-origin",
  "sec-fetch-mode": "cors",
  "sec-fetch-dest": "empty",
  "user-agent": CHROME_UA,
  "x-forwarded-for": forwardedFor,
});
/** A client with no user agent: challenged. */
const anonymous = (forwardedFor: string) => ({ "user-agent": "", "x-forwarded-for": forwardedFor });
/**
 * A plain HTML form post from the app's own page, by a browser without Fetch Metadata (its Origin
 * names the app, as does the Host Next.js hands the route) and no user agent: challenged at the
 * default tier.
 */
const navigation = (forwardedFor: string): Record<string, string> => ({
  accept: "text/html",
  origin: APP,
  host: new URL(APP).host,
  ...anonymous(forwardedFor),
});

const postJson = (path: string, body: unknown, headers: Record<string, string>) =>
  new Request(`${APP}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
const postForm = (path: string, body: string, headers: Record<string, string>) =>
  new Request(`${APP}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body,
  });
const json = async (res: Response) => ({
  status: res.status,
  json: (await res.json()) as Record<string, unknown>,
});

/** The signup route of an app, as `app/signup/route.ts` exports it: 201 with what it would act on. */
const signup = (extra: Partial<NextGateOptions> = {}) =>
  wardenRoute(
    {
      action: "signup",
      email: (body) => body.email,
      pending: (body) => ({ email: body.email }),
      ...extra,
    },
    async (_request, { form, eventId, receipt, pending, challengeCleared }) =>
      Response.json({ form, eventId, receipt, pending: pending ?? null, challengeCleared }, { status: 201 }),
  );

describe("made as `next build` loads a route: no environment yet", () => {
  it("the routes need the client only on the first request; a missing variable fails that request, naming it, until it is set", async () => {
    const route = signup();
    const challenge = wardenChallengeRoute();
    await expect(
      route(postJson("/signup", { email: "ann@example.org" }, pageFetch("81.2.40.1"))),
    ).rejects.toThrow(
      "Warden's client needs WARDEN_URL, WARDEN_API_KEY, WARDEN_TENANT, WARDEN_TICKET_SECRET in the environment",
    );
    await expect(challenge(postJson("/warden/challenge/issue", {}, {}))).rejects.toThrow(/WARDEN_URL/);

    Object.assign(process.env, {
      WARDEN_URL: baseUrl,
      WARDEN_API_KEY: apiKey,
      WARDEN_TENANT: "acme",
      WARDEN_TICKET_SECRET: SECRET,
      WARDEN_TOKEN_ISSUER: warden.deps.config.tokenIssuer,
      WARDEN_TOKEN_AUDIENCE: warden.deps.config.tokenAudience,
      WARDEN_VERIFY_TIMEOUT_MS: "5000",
    });
    const res = await json(
      await route(postJson("/signup", { email: "ann@example.org" }, pageFetch("81.2.40.1"))),
    );
    expect(res).toMatchObject({ status: 201, json: { form: { email: "ann@example.org" } } });
    // One client for every route, made from the environment on its first call.
    expect(clientFromEnv()).toBe(clientFromEnv());
    expect(clientFromEnv()).toMatchObject({ baseUrl, tenantId: "acme" });
  });
});

describe("the Next.js gate, with the client from the environment", () => {
  const route = signup();
  const challenge = wardenChallengeRoute();

  it("allow: the handler runs with the form, the eventId and the checked receipt", async () => {
    const res = await json(
      await route(postJson("/signup", { email: "ann@example.org", name: "Ann" }, pageFetch("81.2.41.7"))),
    );
    expect(res).toMatchObject({
      status: 201,
      json: { form: { email: "ann@example.org", name: "Ann" }, challengeCleared: false, pending: null },
    });
    expect(res.json.receipt).toMatchObject({ tid: "acme", action: "signup", decision: "allow" });
    expect((res.json.receipt as { jti: string }).jti).toBe(res.json.eventId);
  });

  it("the client's address is the last X-Forwarded-For entry, the proxy's: an address the client put before it is never the one scored", async () => {
    // The client claims a clean address; the proxy appended the deny-listed one it saw.
    const denied = await json(
      await route(postJson("/signup", { email: "eve@example.org" }, pageFetch("81.2.42.7, 198.51.100.7"))),
    );
    expect(denied).toMatchObject({
      status: 403,
      json: { code: "warden_denied", reference: expect.any(String) },
    });
    // The client claims a deny-listed address; the proxy appended a clean one.
    const allowed = await json(
      await route(postJson("/signup", { email: "eve@example.org" }, pageFetch("198.51.100.8, 81.2.42.8"))),
    );
    expect(allowed.status).toBe(201);
    // Two header lines are one list (Headers joins them), its last entry the proxy's.
    const twoLines = new Headers([
      ["x-forwarded-for", "198.51.100.9"],
      ["x-forwarded-for", " 81.2.42.9 "],
    ]);
    expect(forwardedClientAddress(new Request(APP, { headers: twoLines }))).toBe("81.2.42.9");
    expect(forwardedClientAddress(new Request(APP))).toBeUndefined();
    expect(
      forwardedClientAddress(new Request(APP, { headers: { "x-forwarded-for": " , " } })),
    ).toBeUndefined();
  });

  it("a remoteAddress of the app's own replaces the header, and trustedProxies reads past a proxy of its own", async () => {
    const own = signup({ remoteAddress: () => "198.51.100.10" });
    expect(
      (await own(postJson("/signup", { email: "eve@example.org" }, pageFetch("81.2.43.7")))).status,
    ).toBe(403);
    // Two proxies: the last entry is what the inner one saw (the outer proxy, trusted), the one before it the client.
    const twoProxies = signup({ trustedProxies: ["10.0.0.0/8"] });
    const res = await twoProxies(
      postJson("/signup", { email: "eve@example.org" }, pageFetch("198.51.100.11, 10.1.2.3")),
    );
    expect(res.status).toBe(403);
  });

  it("a client configured with another tenant's id: Warden allows, the gate refuses the receipt (403 receipt_invalid) and tells onVerdict why", async () => {
    const seen: VerdictSeen[] = [];
    const other = signup({
      client: () => WardenClient.fromEnv(process.env, { tenantId: "someone-else" }),
      onVerdict: (v) => {
        seen.push(v);
      },
    });
    const res = await json(
      await other(postJson("/signup", { email: "ann@example.org" }, pageFetch("81.2.44.7"))),
    );
    expect(res).toMatchObject({ status: 403, json: { code: "receipt_invalid" } });
    expect(seen[0]).toMatchObject({ decision: "allow", receiptInvalid: expect.stringMatching(/tid/) });
  });

  it("challenge round trip (a script's fetch): 428 with a ticket; the challenge route issues and completes it; the re-submitted form is allowed, cleared, with the pending form", async () => {
    const first = await json(
      await route(postJson("/signup", { email: "bob@example.org" }, anonymous("81.2.45.7"))),
    );
    expect(first).toMatchObject({
      status: 428,
      json: { error: "challenge_required", code: "warden_challenge" },
    });
    const ticket = first.json.ticket as string;
    const issued = await json(
      await challenge(postJson("/warden/challenge/issue", { wardenTicket: ticket }, {})),
    );
    expect(issued).toMatchObject({ status: 200, json: { method: "proof_of_work" } });
    const { seed, difficulty } = issued.json.instructions as { seed: string; difficulty: number };
    const challengeId = issued.json.challengeId as string;
    const wrong = await json(
      await challenge(
        postJson(
          "/warden/challenge/complete",
          { wardenTicket: ticket, challengeId, proof: { nonce: "x" } },
          {},
        ),
      ),
    );
    expect(wrong).toMatchObject({ status: 400, json: { code: "invalid_challenge_proof" } });
    const { nonce } = solvePow(seed, difficulty);
    const done = await json(
      await challenge(
        postJson("/warden/challenge/complete", { wardenTicket: ticket, challengeId, proof: { nonce } }, {}),
      ),
    );
    expect(done).toMatchObject({ status: 200, json: { ok: true } });
    const again = await json(
      await route(
        postJson("/signup", { wardenTicket: ticket, wardenChallengeId: challengeId }, anonymous("81.2.45.7")),
      ),
    );
    expect(again).toMatchObject({
      status: 201,
      json: {
        challengeCleared: true,
        pending: { email: "bob@example.org" },
        form: { email: "bob@example.org" },
      },
    });
    expect(again.json.receipt).toMatchObject({ jti: again.json.eventId, decision: "allow" });
  });

  it("a plain HTML form post: the 428 is the page holding <warden-challenge auto submit>; its post-back after the check is allowed, cleared", async () => {
    const first = await route(
      postForm("/signup", "email=carol%40example.org&name=Carol", navigation("81.2.46.7")),
    );
    expect(first.status).toBe(428);
    expect(first.headers.get("content-type")).toMatch(/^text\/html/);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const page = await first.text();
    expect(page).toContain('<script type="module" src="/warden/warden.js"></script>');
    expect(page).toMatch(/<form method="post" action="\/signup">/);
    const ticket = /<warden-challenge ticket="([^"]+)" auto submit>/.exec(page)?.[1] as string;
    const issued = await json(
      await challenge(postForm("/warden/challenge/issue", `wardenTicket=${ticket}`, {})),
    );
    const { seed, difficulty } = issued.json.instructions as { seed: string; difficulty: number };
    const challengeId = issued.json.challengeId as string;
    const done = await challenge(
      postJson(
        "/warden/challenge/complete",
        { wardenTicket: ticket, challengeId, proof: solvePow(seed, difficulty) },
        {},
      ),
    );
    expect(done.status).toBe(200);
    // What the widget posts back: the page's fields, the ticket and the challengeId.
    const fields = [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
      ([, name, value]) => [name as string, value as string],
    );
    const back = new URLSearchParams([
      ...fields,
      ["wardenTicket", ticket],
      ["wardenChallengeId", challengeId],
    ]);
    const cleared = await json(await route(postForm("/signup", back.toString(), navigation("81.2.46.7"))));
    expect(cleared).toMatchObject({
      status: 201,
      json: { challengeCleared: true, form: { email: "carol@example.org", name: "Carol" } },
    });
  });

  it("a form post the gate cannot read as verified is refused before any verify: a field sent twice (400), another media type (415)", async () => {
    const twice = await json(
      await route(
        postForm("/signup", "email=dan%40example.org&email=eve%40example.org", pageFetch("81.2.47.7")),
      ),
    );
    expect(twice).toMatchObject({ status: 400, json: { error: "bad_request", code: "duplicate_field" } });
    const text = await json(
      await route(
        new Request(`${APP}/signup`, {
          method: "POST",
          headers: { "content-type": "text/plain", ...pageFetch("81.2.47.7") },
          body: "email=dan@example.org",
        }),
      ),
    );
    expect(text).toMatchObject({ status: 415, json: { code: "unsupported_media_type" } });
    const multipart = new FormData();
    multipart.set("email", "dan@example.org");
    const sent = await route(
      new Request(`${APP}/signup`, { method: "POST", headers: pageFetch("81.2.47.8"), body: multipart }),
    );
    expect(sent.status).toBe(201);
  });

  it("the page step hands out a page token bound to the client's network; a step it does not know is 404 in the error schema", async () => {
    const page = await json(await challenge(postJson("/warden/challenge/page", {}, pageFetch("81.2.48.7"))));
    expect(page.status).toBe(200);
    expect(page.json.pageToken).toMatch(/^wpt1\./);
    const unknown = await json(await challenge(postJson("/warden/challenge/other", {}, {})));
    expect(unknown).toEqual({
      status: 404,
      json: { error: "not_found", code: "route_not_found", message: "No such route." },
    });
  });

  it("an onVerdict that rejects fails the request (the handler's promise rejects, which Next.js answers 500): never an allow, never an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const keep = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", keep);
    try {
      let ran = false;
      const failing = wardenRoute(
        {
          action: "signup",
          email: (body) => body.email,
          onVerdict: async () => {
            throw new Error("the app's logger failed");
          },
        },
        async () => {
          ran = true;
          return new Response(null, { status: 201 });
        },
      );
      await expect(
        failing(postJson("/signup", { email: "ann@example.org" }, pageFetch("81.2.49.7"))),
      ).rejects.toThrow("the app's logger failed");
      expect(ran).toBe(false);
      // A rejection nobody awaited would be reported on a later turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", keep);
    }
  });

  it("a client given as such is checked when the route is made, as the other gates check theirs", () => {
    const noTenant = new WardenClient({ baseUrl, apiKey });
    expect(() => wardenRoute({ client: noTenant, action: "signup" }, async () => new Response())).toThrow(
      /tenant/,
    );
    expect(() =>
      wardenChallengeRoute({ client: new WardenClient({ baseUrl, apiKey, tenantId: "acme" }) }),
    ).toThrow(/ticketSecret/);
  });
});
