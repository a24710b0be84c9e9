import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * subject.tls.ja4 (docs/api.md, "TLS fingerprint"): a script that sends exactly what a page's fetch()
 * sends, and imitates the page's evidence (a page token asked for the way the page asks, a person's
 * wait and counts), is told apart by the TLS handshake its own library made.
 */
const fixture = JSON.parse(
  fs.readFileSync(new URL("./signals/fixtures/tls-ja4.json", import.meta.url), "utf8"),
) as { measured: Record<string, string>; published: Record<string, string> };
const CHROMIUM_JA4 = fixture.measured["chromium 156 (Debian, headless)"] as string;
const UNDICI_JA4 = fixture.measured["undici 7.30 fetch"] as string;
const SAFARI_IOS_JA4 = fixture.published["safari ios 18"] as string;

const CHROME_UA =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const SAFARI_IOS_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1";
const FIREFOX_UA = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0";

/** What Chromium 156's page fetch() of the signup sends, in its order (fixtures/chromium-header-order.json). */
const CHROME_FETCH = {
  "sec-ch-ua-platform": '"Linux"',
  "user-agent": CHROME_UA,
  "sec-ch-ua": '"Chromium";v="156", "Not-A.Brand";v="24"',
  "content-type": "application/json",
  "sec-ch-ua-mobile": "?0",
  accept: "*/*",
  "sec-fetch-site": "same-origin",
  "sec-fetch-mode": "cors",
  "sec-fetch-dest": "empty",
  "accept-encoding": "gzip, deflate, br, zstd",
  "accept-language": "en-US,en;q=0.9",
};
/** Safari on iOS sends no client hints and no Fetch Metadata to a same-origin fetch. */
const SAFARI_FETCH = {
  "content-type": "application/json",
  accept: "*/*",
  "accept-language": "en-GB,en;q=0.9",
  "user-agent": SAFARI_IOS_UA,
  "accept-encoding": "gzip, deflate, br",
};
const PERSON = {
  elapsedMs: 4200,
  keys: 34,
  inserted: 0,
  pasted: 0,
  pointerMoves: 96,
  clicks: 2,
  untrusted: 0,
};

let t: TestApp;
let now = Date.now();
let apiKey: string;

beforeAll(async () => {
  t = await makeTestApp({ clock: () => now });
  await t.tenant("tls");
  await t.store.policies.put("tls", JSON.stringify({ requirePage: true }), now);
  apiKey = (await t.key("tls")).apiKey;
});
afterAll(async () => {
  await t?.close();
});

let attempts = 0;
/** One signup as the page makes it: a page token at load, a few seconds of filling in, the submit. */
async function signup(headers: Record<string, string>, ja4: string | undefined) {
  const n = ++attempts;
  const subject = { userAgent: headers["user-agent"], ipTrunc: `203.0.${n}.0/24` };
  const token = await t.app.inject({
    method: "POST",
    url: "/v1/page-tokens",
    headers: bearer(apiKey),
    payload: { subject },
  });
  expect(token.statusCode).toBe(200);
  now += 4_000;
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(apiKey),
    payload: {
      action: "signup",
      session: `tls-${n}`,
      subject: {
        ...subject,
        headers,
        page: { token: token.json().pageToken, behaviour: PERSON },
        ...(ja4 === undefined ? {} : { tls: { ja4 } }),
      },
    },
  });
  expect(res.statusCode).toBe(200);
  const verdict = res.json() as { decision: string; actorType: string; eventId: string; reasons: string[] };
  const event = await t.store.events.get("tls", verdict.eventId);
  const findings = ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
  return { ...verdict, findings, recorded: event?.signals };
}

describe("verify reads the client's TLS fingerprint", () => {
  it("a page's fetch from Chromium over Chromium's TLS: allowed as a person, the fingerprint recorded", async () => {
    const v = await signup(CHROME_FETCH, CHROMIUM_JA4);
    expect(v).toMatchObject({ decision: "allow", actorType: "human" });
    expect(v.findings.filter((f) => f.startsWith("tls_"))).toEqual([]);
    expect(v.recorded).toMatchObject({ tls: CHROMIUM_JA4 });
  });

  it("the same request from undici imitating the page: without the fingerprint it passes, with it it is denied", async () => {
    const blind = await signup(CHROME_FETCH, undefined);
    expect(blind.decision).toBe("allow");
    const seen = await signup(CHROME_FETCH, UNDICI_JA4);
    expect(seen).toMatchObject({ decision: "deny", actorType: "agent_abusive" });
    expect(seen.findings).toContain("tls_library");
    expect(seen.reasons.join(" ")).toMatch(/TLS handshake is Node\.js/);
  });

  it("Safari on iOS headers: allowed over Apple's TLS, denied over Node's", async () => {
    const person = await signup(SAFARI_FETCH, SAFARI_IOS_JA4);
    expect(person.decision).toBe("allow");
    expect(person.findings.filter((f) => f.startsWith("tls_"))).toEqual([]);
    expect(await signup(SAFARI_FETCH, UNDICI_JA4)).toMatchObject({
      decision: "deny",
      actorType: "agent_abusive",
    });
  });

  it("a person's Chromium with a Firefox user agent (a user-agent switcher): at most a challenge, never a deny", async () => {
    const v = await signup({ ...CHROME_FETCH, "user-agent": FIREFOX_UA }, CHROMIUM_JA4);
    expect(v.findings).toContain("tls_other_browser");
    expect(v.decision).not.toBe("deny");
    expect(v.actorType).not.toBe("agent_abusive");
  });

  it("a value that is not a JA4: 400 with the field named", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: { action: "signup", subject: { tls: { ja4: "not-a-fingerprint" } } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/tls/);
  });
});
