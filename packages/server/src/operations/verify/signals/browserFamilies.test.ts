import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../../testing/harness.js";
import type { Verdict } from "../schema.js";

/**
 * Real browsers of each major family, as they send a top-level navigation (header sets built from
 * each browser's documented behaviour, see docs/browser-headers.md; the Chromium set is a capture of
 * Debian's Chromium 156 in this repository's browser tests), with and without what a plain-http
 * origin or a proxy that strips `sec-*` removes: none is called an abusive agent or denied.
 */
const NAV = {
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "accept-encoding": "gzip, deflate, br",
  "accept-language": "en-GB,en;q=0.9",
  "upgrade-insecure-requests": "1",
};
const FETCH = {
  "sec-fetch-site": "same-origin",
  "sec-fetch-mode": "navigate",
  "sec-fetch-dest": "document",
  "sec-fetch-user": "?1",
};
const hints = (brands: string, platform: string, mobile = "?0") => ({
  "sec-ch-ua": brands,
  "sec-ch-ua-mobile": mobile,
  "sec-ch-ua-platform": `"${platform}"`,
});

const BROWSERS: [string, string, Record<string, string>][] = [
  [
    "Chrome 131 on Windows",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    {
      ...NAV,
      ...FETCH,
      ...hints('"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"', "Windows"),
      // Sent when the site asked for it with Accept-CH.
      "sec-ch-ua-full-version-list":
        '"Google Chrome";v="131.0.6778.86", "Chromium";v="131.0.6778.86", "Not_A Brand";v="24.0.0.0"',
    },
  ],
  [
    "Chromium 156 on Linux (captured)",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
    { ...NAV, ...FETCH, ...hints('"Not:A-Brand";v="8", "Chromium";v="156"', "Linux") },
  ],
  [
    "Edge 131 on Windows",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    {
      ...NAV,
      ...FETCH,
      ...hints('"Microsoft Edge";v="131", "Chromium";v="131", "Not_A Brand";v="24"', "Windows"),
    },
  ],
  [
    "Samsung Internet 26 on Android",
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
    {
      ...NAV,
      ...FETCH,
      ...hints('"Chromium";v="122", "Not(A:Brand";v="24", "Samsung Internet";v="26"', "Android", "?1"),
    },
  ],
  [
    "Firefox 133 on Windows",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    { ...NAV, ...FETCH },
  ],
  [
    "Safari 18 on macOS",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    { ...NAV, ...FETCH },
  ],
  [
    "Safari on iOS 18",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    { ...NAV, ...FETCH },
  ],
  [
    "Chrome on iOS (CriOS, WebKit: no client hints)",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
    { ...NAV, ...FETCH },
  ],
  [
    "Edge on iOS (EdgiOS, WebKit: no client hints)",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 EdgiOS/131.2903.68 Mobile/15E148 Safari/605.1.15",
    { ...NAV, ...FETCH },
  ],
];

let t: TestApp;
let key: string;
let n = 0;
beforeAll(async () => {
  t = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "100000" } });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

async function verifyResponse(
  userAgent: string,
  headers: Record<string, string>,
  browserSignals?: Record<string, unknown>,
) {
  n++;
  return t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(key),
    payload: {
      action: "signup",
      session: `s-${n}`,
      subject: {
        userAgent,
        headers: { ...headers, "user-agent": userAgent },
        ipTrunc: `81.2.${n % 250}.0/24`,
        ...(browserSignals ? { browserSignals } : {}),
      },
    },
  });
}
const verify = async (
  userAgent: string,
  headers: Record<string, string>,
  signals?: Record<string, unknown>,
) => (await verifyResponse(userAgent, headers, signals)).json<Verdict>();

const withoutSec = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).filter(([name]) => !name.startsWith("sec-")));

describe("real browsers of each family are not called abusive agents", () => {
  for (const [name, ua, headers] of BROWSERS) {
    it(`${name}: on HTTPS, on plain http or behind a proxy that strips sec-*, and with only Accept-Language forwarded`, async () => {
      for (const set of [
        headers,
        withoutSec(headers),
        { "accept-language": headers["accept-language"] as string },
      ]) {
        const verdict = await verify(ua, set);
        expect({ name, actorType: verdict.actorType, decision: verdict.decision }).not.toMatchObject({
          actorType: "agent_abusive",
        });
        expect(verdict.decision).not.toBe("deny");
      }
    });
  }
});

describe("what only a program sends is positive evidence", () => {
  const [, chromeUa, chrome] = BROWSERS[0] as [string, string, Record<string, string>];
  it("Sec-CH-UA naming HeadlessChrome, a full version list of another version, Fetch Metadata without Chromium's client hints, half a Sec-Fetch group", async () => {
    const { "sec-ch-ua": _a, "sec-ch-ua-mobile": _b, "sec-ch-ua-platform": _c, ...noHints } = chrome;
    const { "sec-fetch-mode": _m, "sec-fetch-dest": _d, ...halfFetch } = chrome;
    for (const set of [
      { ...chrome, "sec-ch-ua": '"HeadlessChrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"' },
      noHints,
      halfFetch,
    ]) {
      expect((await verify(chromeUa, set)).actorType).toBe("agent_abusive");
    }
    // A version the hints contradict is what a person's user-agent switcher writes too: never human,
    // the risk raised, but not called automation on its own.
    const switched = await verify(chromeUa, {
      ...chrome,
      "sec-ch-ua-full-version-list":
        '"Google Chrome";v="120.0.6099.71", "Chromium";v="120.0.6099.71", "Not_A Brand";v="24.0.0.0"',
    });
    expect(switched.actorType).toBe("unknown");
    expect(switched.reasons.join(" ")).toMatch(/contradicts the browser's client hints/);
  });

  it("a headless browser's spoofed user agent: Sec-CH-UA naming HeadlessChrome alone is not allowed", async () => {
    const verdict = await verify(chromeUa, {
      ...chrome,
      "sec-ch-ua": '"Chromium";v="131", "HeadlessChrome";v="131", "Not_A Brand";v="24"',
    });
    expect(verdict).toMatchObject({ actorType: "agent_abusive", decision: "challenge" });
    expect(verdict.reasons.join(" ")).not.toMatch(/match the browser/);
  });

  it("the GREASE brand puppeteer-extra-plugin-stealth writes into a current Chromium's client hints (captured): agent_abusive", async () => {
    const { "sec-ch-ua-full-version-list": _full, ...lowEntropy } = chrome;
    const verdict = await verify(chromeUa.replace("131.0.0.0", "156.0.0.0"), {
      ...lowEntropy,
      "sec-ch-ua": '" Not A;Brand";v="99", "Chromium";v="156", "Google Chrome";v="156"',
    });
    expect(verdict.actorType).toBe("agent_abusive");
    expect(verdict.decision).not.toBe("allow");
    expect(verdict.reasons.join(" ")).toMatch(/GREASE brand " Not A;Brand"/);
  });

  it("a page reporting navigator.webdriver: never human, whatever its headers", async () => {
    n++;
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(key),
      payload: {
        action: "signup",
        session: `s-${n}`,
        subject: {
          userAgent: chromeUa,
          headers: chrome,
          ipTrunc: `81.2.${n}.0/24`,
          browserSignals: { webdriver: true },
        },
      },
    });
    const verdict = res.json<Verdict>();
    expect(verdict.actorType).toBe("agent_abusive");
    expect(verdict.decision).not.toBe("allow");
    expect(verdict.reasons.join(" ")).toMatch(/navigator\.webdriver/);
    // Consistent headers show a real browser, not a person at it: they take nothing off.
    expect(verdict.reasons.join(" ")).not.toMatch(/match the browser/);
  });
});

describe("what the page and its own worker read (subject.browserSignals from @warden/browser)", () => {
  const [, chromeUa, chrome] = BROWSERS[0] as [string, string, Record<string, string>];

  it("a clean report changes nothing: a person's browser is still allowed as human", async () => {
    const verdict = await verify(chromeUa, chrome, { webdriver: false });
    expect(verdict).toMatchObject({ decision: "allow", actorType: "human" });
  });

  it("page and worker disagree (a stealth setup's patches): challenged, not human, and not called automation", async () => {
    const verdict = await verify(chromeUa, chrome, {
      webdriver: false,
      mismatch: ["hardwareConcurrency", "webgl"],
    });
    expect(verdict).toMatchObject({ decision: "challenge", actorType: "unknown" });
    expect(verdict.reasons.join(" ")).toMatch(/read a different processor count and graphics renderer/);
    expect(verdict.reasons.join(" ")).not.toMatch(/match the browser/);
  });

  it("a worker naming a headless browser the page hides: agent_abusive", async () => {
    const verdict = await verify(chromeUa, chrome, { webdriver: false, workerHeadless: true });
    expect(verdict.actorType).toBe("agent_abusive");
    expect(verdict.decision).not.toBe("allow");
    expect(verdict.reasons.join(" ")).toMatch(/worker of the page reports a headless browser/);
  });

  it("next to navigator.webdriver the disagreement is the same tool's doing: counted once", async () => {
    const verdict = await verify(chromeUa, chrome, { webdriver: true, mismatch: ["userAgentData"] });
    expect(verdict.actorType).toBe("agent_abusive");
    expect(verdict.reasons.join(" ")).toMatch(/navigator\.webdriver/);
    expect(verdict.reasons.join(" ")).not.toMatch(/a worker it started/);
  });

  it("names it does not know are ignored; a list past 16 names or a name past 64 characters is refused", async () => {
    const verdict = await verify(chromeUa, chrome, { webdriver: false, mismatch: ["screenColour", "x"] });
    expect(verdict).toMatchObject({ decision: "allow", actorType: "human" });
    for (const mismatch of [Array.from({ length: 17 }, () => "webgl"), ["w".repeat(65)], "webgl"]) {
      const res = await verifyResponse(chromeUa, chrome, { webdriver: false, mismatch });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: "bad_request" });
    }
  });
});

describe("where a Chromium request carries Accept-Language (subject.headers in the order received)", () => {
  const captures = JSON.parse(
    readFileSync(new URL("./fixtures/chromium-header-order.json", import.meta.url), "utf8"),
  ) as { chromium: Record<string, string[]>; devtoolsLanguageOverride: Record<string, string[]> };
  const ua =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
  const values: Record<string, string> = {
    ...NAV,
    ...FETCH,
    ...hints('"Not:A-Brand";v="8", "Chromium";v="156", "Google Chrome";v="156"', "Windows"),
    "user-agent": ua,
  };
  const ordered = (names: string[]) => Object.fromEntries(names.map((name) => [name, values[name] ?? ""]));
  const person = ordered(captures.chromium.navigation as string[]);
  // puppeteer-extra-plugin-stealth with Chromium's real GREASE brand put back: only the order tells.
  const stealth = ordered(
    captures.devtoolsLanguageOverride[
      "navigation, puppeteer-extra-plugin-stealth 2.11.2 through playwright-extra 4.3.6"
    ] as string[],
  );

  it("Chromium's own order: a person's browser allowed as human", async () => {
    expect(await verify(ua, person)).toMatchObject({ decision: "allow", actorType: "human" });
  });

  it("the DevTools protocol's language override: challenged, not human, not called automation", async () => {
    const verdict = await verify(ua, stealth);
    expect(verdict).toMatchObject({ decision: "challenge", actorType: "unknown" });
    expect(verdict.reasons.join(" ")).toMatch(/Accept-Language comes between User-Agent and Accept/);
    expect(verdict.reasons.join(" ")).not.toMatch(/match the browser/);
  });

  it("with the page's worker disagreeing too, still never allowed nor human", async () => {
    const verdict = await verify(ua, stealth, {
      webdriver: false,
      mismatch: ["hardwareConcurrency", "webgl"],
    });
    expect(verdict.decision).not.toBe("allow");
    expect(verdict.actorType).not.toBe("human");
  });
});
