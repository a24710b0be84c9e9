import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp, windowStartClock } from "../testing/harness.js";

/**
 * The console's sign-in: a ledger:read key becomes an HttpOnly, SameSite=Strict session cookie that
 * reads one tenant's data on GET only, ends at sign-out or with its key, and never crosses tenants.
 */
let t: TestApp;
let reader: string;
let readerId: string;
let writer: string;
let other: string;
let acmeEvent: string;

let signIns = 0;
/** A sign-in from an address of its own (sign-ins are limited per address; one test floods one). */
const signIn = (
  apiKey: string,
  headers: Record<string, string | undefined> = {},
  remoteAddress = `192.0.2.${++signIns}`,
) =>
  t.app.inject({
    method: "POST",
    url: "/console/session",
    headers: dropUnset({
      "content-type": "application/json",
      host: "warden.test",
      origin: "http://warden.test",
      ...headers,
    }),
    payload: { apiKey },
    remoteAddress,
  });
/** Headers given as undefined are not sent. */
const dropUnset = (headers: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
const cookieOf = (res: { headers: Record<string, unknown> }): string =>
  String(res.headers["set-cookie"]).split(";")[0] as string;

beforeAll(async () => {
  // The console is served at a name of its own (WARDEN_ADMIN_HOSTS, http/adminHosts.ts).
  t = await makeTestApp({ clock: windowStartClock(60), env: { WARDEN_ADMIN_HOSTS: "warden.test" } });
  await t.tenant("acme");
  await t.tenant("globex");
  ({ apiKey: reader, keyId: readerId } = await t.key("acme", { scopes: ["ledger:read"] }));
  writer = (await t.key("acme", { scopes: ["verify:write", "feedback:write"] })).apiKey;
  other = (await t.key("globex", { scopes: ["ledger:read"] })).apiKey;
  const v = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(writer),
    payload: { action: "signup", subject: {} },
  });
  acmeEvent = v.json().eventId;
});
afterAll(() => t.close());

describe("sign-in", () => {
  it("exchanges a ledger:read key for an HttpOnly, SameSite=Strict cookie that is not the key", async () => {
    const res = await signIn(reader);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ tenantId: "acme", keyId: readerId });
    const setCookie = String(res.headers["set-cookie"]);
    expect(setCookie).toMatch(/^warden_console=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toContain(reader);
    expect(res.headers["cache-control"]).toBe("no-store");
  });

  it("refuses a key without ledger:read (403 insufficient_scope) and an unknown key (401)", async () => {
    expect((await signIn(writer)).json().code).toBe("insufficient_scope");
    const unknown = await signIn(`${reader.slice(0, -4)}AAAA`);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().code).toBe("invalid_api_key");
  });

  it("sign-ins are rate limited per client address, wrong keys included: the 11th in a minute is 429 with Retry-After", async () => {
    const from = "198.51.100.77";
    for (let i = 0; i < 10; i++) {
      expect((await signIn(`wdn_${"A".repeat(43)}`, {}, from)).statusCode).toBe(401);
    }
    const limited = await signIn(reader, {}, from);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("rate_limited");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // Another address signs in as usual.
    expect((await signIn(reader, {}, "198.51.100.78")).statusCode).toBe(200);
  });

  it("sign-ins are limited per IPv6 /64, not per address: the 11th from any address of the /64 is 429", async () => {
    for (let i = 1; i <= 10; i++) {
      expect((await signIn(`wdn_${"A".repeat(43)}`, {}, `2001:db8:77:1::${i.toString(16)}`)).statusCode).toBe(
        401,
      );
    }
    const limited = await signIn(reader, {}, "2001:db8:77:1:ffff:ffff:ffff:ffff");
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe("rate_limited");
    expect((await signIn(reader, {}, "2001:db8:77:2::1")).statusCode).toBe(200);
  });

  it("refuses a sign-in posted from another site (Origin) — login CSRF", async () => {
    const res = await signIn(reader, { origin: "https://evil.example" });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe("forbidden_origin");
  });

  it("refuses a sign-in that names no origin: no Origin and no Sec-Fetch-Site: same-origin is 403 forbidden_origin", async () => {
    for (const headers of [
      { origin: undefined },
      { origin: undefined, "sec-fetch-site": "cross-site" },
      { origin: undefined, "sec-fetch-site": "same-site" },
      { origin: undefined, "sec-fetch-site": "none" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
    ]) {
      const res = await signIn(reader, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
      expect(res.json().code, JSON.stringify(headers)).toBe("forbidden_origin");
      expect(res.headers["set-cookie"], JSON.stringify(headers)).toBeUndefined();
    }
    // Where a browser's privacy setting or a proxy drops Origin, its Fetch Metadata stands in.
    const fetchMetadata = await signIn(reader, { origin: undefined, "sec-fetch-site": "same-origin" });
    expect(fetchMetadata.statusCode).toBe(200);
  });
});

describe("the session cookie", () => {
  it("what it reads is never kept by a cache (the URL does not name the tenant)", async () => {
    const cookie = cookieOf(await signIn(reader));
    for (const url of [`/v1/events/${acmeEvent}`, "/v1/events?format=csv", "/v1/stats/decisions"]) {
      const res = await t.app.inject({ method: "GET", url, headers: { cookie } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["cache-control"], url).toBe("private, no-store");
    }
    const verdict = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(writer),
      payload: { action: "signup", subject: {} },
    });
    expect(verdict.headers["cache-control"]).toBe("private, no-store");
  });

  it("reads its own tenant's data on GET; another tenant's event is 404", async () => {
    const cookie = cookieOf(await signIn(reader));
    const own = await t.app.inject({ method: "GET", url: `/v1/events/${acmeEvent}`, headers: { cookie } });
    expect(own.statusCode).toBe(200);
    const globexCookie = cookieOf(await signIn(other));
    const foreign = await t.app.inject({
      method: "GET",
      url: `/v1/events/${acmeEvent}`,
      headers: { cookie: globexCookie },
    });
    expect(foreign.statusCode).toBe(404);
    const list = await t.app.inject({ method: "GET", url: "/v1/events", headers: { cookie: globexCookie } });
    expect(list.json().items).toEqual([]);
  });

  it("never authenticates a write: POST /v1/feedback with only the cookie is 401", async () => {
    const cookie = cookieOf(await signIn(reader));
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/feedback",
      headers: { cookie, "content-type": "application/json" },
      payload: { eventId: acmeEvent, outcome: "converted" },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe("invalid_api_key");
  });

  it("sign-out ends the session at once: the old cookie is 401 console_session_required", async () => {
    const cookie = cookieOf(await signIn(reader));
    const page = { cookie, host: "warden.test", origin: "http://warden.test" };
    const refused = await t.app.inject({ method: "DELETE", url: "/console/session", headers: page });
    expect(refused.statusCode).toBe(403); // without the console's header: a cross-site form cannot sign out
    const noOrigin = await t.app.inject({
      method: "DELETE",
      url: "/console/session",
      headers: { cookie, host: "warden.test", "x-warden-console": "1" },
    });
    expect(noOrigin.statusCode).toBe(403); // nor without an Origin (or Sec-Fetch-Site) naming this host
    expect(noOrigin.json().code).toBe("forbidden_origin");
    const out = await t.app.inject({
      method: "DELETE",
      url: "/console/session",
      headers: { ...page, "x-warden-console": "1" },
    });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers["set-cookie"])).toMatch(/warden_console=;/);
    const after = await t.app.inject({ method: "GET", url: "/v1/stats/decisions", headers: { cookie } });
    expect(after.statusCode).toBe(401);
    expect(after.json().code).toBe("console_session_required");
    expect(
      (await t.app.inject({ method: "GET", url: "/console/session", headers: { cookie } })).statusCode,
    ).toBe(401);
  });

  it("a revoked key's sessions stop working", async () => {
    const { apiKey, keyId } = await t.key("acme", { scopes: ["ledger:read"] });
    const cookie = cookieOf(await signIn(apiKey));
    expect(
      (await t.app.inject({ method: "GET", url: "/console/session", headers: { cookie } })).statusCode,
    ).toBe(200);
    await t.store.apiKeys.revoke(keyId, Date.now());
    const after = await t.app.inject({ method: "GET", url: "/v1/stats/decisions", headers: { cookie } });
    expect(after.json().code).toBe("console_session_required");
  });

  it("a forged or malformed cookie is 401, never a 500", async () => {
    for (const value of ["x".repeat(43), "not a secret", "%00"]) {
      const res = await t.app.inject({
        method: "GET",
        url: "/v1/stats/decisions",
        headers: { cookie: `warden_console=${value}` },
      });
      expect(res.statusCode).toBe(401);
    }
  });
});

describe("read API errors", () => {
  it("bad query values are 400 invalid_query", async () => {
    for (const query of [
      "since=yesterday",
      "since=2026-11-20T00:00:00Z&until=2026-11-19T00:00:00Z",
      "bucket=week",
      "format=xml",
      "unknown=1",
    ]) {
      const res = await t.app.inject({
        method: "GET",
        url: `/v1/stats/decisions?${query}`,
        headers: bearer(reader),
      });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code, query).toBe("invalid_query");
    }
    for (const url of [
      "/v1/stats/calibration?bins=1",
      "/v1/stats/calibration?bins=abc",
      "/v1/stats/what-if?falseAllow=0",
      "/v1/stats/what-if?falseAllow=-1",
      "/v1/events?limit=501",
      "/v1/events?cursor=bm90LWEtY3Vyc29y",
      "/v1/feedback/quarantined?cursor=%00",
    ]) {
      const res = await t.app.inject({ method: "GET", url, headers: bearer(reader) });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code, url).toBe("invalid_query");
    }
  });

  it("a key without ledger:read is 403 insufficient_scope on every read route", async () => {
    for (const url of [
      "/v1/stats/decisions",
      "/v1/stats/challenges",
      "/v1/events",
      `/v1/events/${acmeEvent}`,
      "/v1/stats/outcomes",
      "/v1/feedback/quarantined",
      "/v1/stats/calibration",
      "/v1/stats/what-if",
    ]) {
      const res = await t.app.inject({ method: "GET", url, headers: bearer(writer) });
      expect(res.statusCode, url).toBe(403);
    }
  });

  it("CSV neutralises values a spreadsheet would run as formulas", async () => {
    await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(writer),
      payload: { action: '=HYPERLINK("http://evil")', subject: {}, session: "@SUM(1)" },
    });
    const res = await t.app.inject({ method: "GET", url: "/v1/events?format=csv", headers: bearer(reader) });
    expect(res.body).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(res.body).toContain("'@SUM(1)");
    // Where a spreadsheet splits on semicolons, an unquoted `x;=cmd…` would be a cell `=cmd…`.
    await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(writer),
      payload: { action: "signup", subject: {}, session: "x;=cmd|' /C calc'!A0;", surface: "a\t=1+1" },
    });
    const split = (
      await t.app.inject({ method: "GET", url: "/v1/events?format=csv", headers: bearer(reader) })
    ).body;
    expect(split).toContain(`"x;=cmd|' /C calc'!A0;"`);
    expect(split).toContain(`"a\t=1+1"`);
  });
});

describe("the console's pages", () => {
  it("are served with a CSP that runs only the console's own files and forbids framing", async () => {
    const page = await t.app.inject({ method: "GET", url: "/console/" });
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect((await t.app.inject({ method: "GET", url: "/console" })).headers.location).toBe("/console/");
    expect((await t.app.inject({ method: "GET", url: "/console/../package.json" })).statusCode).toBe(404);
  });
});
