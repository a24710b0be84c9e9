import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { CHROME_HEADERS, CHROME_UA } from "../../../testing/harness.js";
import { DEFAULT_MODEL } from "../decisionModel.js";
import { browserHeaderFindings, normaliseHeaders, readBrowserHeaders } from "./browserHeaders.js";
import { emailHash, isDisposableDomain, readEmail } from "./email.js";
import { truncateIp } from "./ip.js";
import { readUserAgent, userAgentFindings } from "./userAgent.js";
import { mergeLimits, slidingCount, velocityChecks, velocityFindings } from "./velocity.js";

const FIREFOX_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";

describe("user agent", () => {
  it.each([
    "curl/8.5.0",
    "python-requests/2.31.0",
    "Go-http-client/1.1",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36",
  ])("recognises automation: %s", (ua) => {
    expect(readUserAgent(ua).automation).toBe(true);
  });

  it("reads the claimed browser family and major version", () => {
    expect(readUserAgent(CHROME_UA)).toEqual({
      present: true,
      automation: false,
      browser: { family: "chromium", major: 131 },
      claim: "browser",
      os: "Windows",
    });
    expect(readUserAgent(FIREFOX_UA).browser).toEqual({ family: "firefox", major: 133 });
    expect(readUserAgent(undefined).present).toBe(false);
    expect(readUserAgent("   ").present).toBe(false);
  });

  it("a browser named by its engine alone (Samsung Internet, an in-app browser, a WebView) claims that engine's family", () => {
    const samsung =
      "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36";
    const instagram =
      "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 Instagram 357.0.0.25.101 Android";
    const facebookIos =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/490.0]";
    expect(readUserAgent(samsung).browser).toEqual({ family: "chromium", major: 122 });
    expect(readUserAgent(instagram).browser).toEqual({ family: "chromium", major: 131 });
    expect(readUserAgent(facebookIos).browser?.family).toBe("safari");
  });

  it("a user agent that names no browser, app or program claims nothing: ua_unrecognized, weighed as a missing one", () => {
    for (const ua of [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Safari/537.36",
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chr",
      "Mozilla/5.0 (X11; Linux x86_64)",
    ]) {
      const sig = readUserAgent(ua);
      expect({ ua, claim: sig.claim }).toEqual({ ua, claim: "unrecognized" });
      expect(userAgentFindings(sig, { missing: 2.5, automation: 3.5 })).toMatchObject([
        { id: "ua_unrecognized", logOdds: 2.5 },
      ]);
    }
    expect(readUserAgent("AcmeShop/5.2.1 (Linux; Android 14; Pixel 8) okhttp/4.12.0").claim).toBe("app");
  });

  it("a native app that names itself and its platform is not automation for its HTTP stack's token", () => {
    for (const ua of [
      "AcmeShop/5.2.1 (Linux; Android 14; Pixel 8) okhttp/4.12.0",
      "AcmeShop/5.2.1 (com.acme.shop; build:5210; iOS 18.1.0) Alamofire/5.9.1",
      "AcmeShop/5.2 CFNetwork/1568.100.1 Darwin/24.0.0",
    ]) {
      expect({ ua, automation: readUserAgent(ua).automation }).toEqual({ ua, automation: false });
    }
    // A library first, a crawler's name, or no platform: automation as before.
    for (const ua of [
      "okhttp/4.12.0",
      "curl/8.5.0 (Android 14)",
      "AcmeShop/5.2.1 (Linux; Android 14) okhttp/4.12.0 Googlebot/2.1",
      "python-requests/2.32.3",
      "AcmeShop/1.0",
    ]) {
      expect({ ua, automation: readUserAgent(ua).automation }).toEqual({ ua, automation: true });
    }
  });
});

describe("browser headers", () => {
  it("finds nothing missing when Chrome sends what Chrome sends, with any header-name case", () => {
    const upper = Object.fromEntries(Object.entries(CHROME_HEADERS).map(([k, v]) => [k.toUpperCase(), v]));
    expect(readBrowserHeaders(readUserAgent(CHROME_UA), normaliseHeaders(upper))).toEqual({
      missing: [],
      missingBesideForwarded: false,
      impossible: [],
      consistent: true,
    });
  });

  it("a partial forwarding (only Accept-Language) is neither consistent nor evidence against the browser", () => {
    const sig = readBrowserHeaders(readUserAgent(CHROME_UA), normaliseHeaders({ "accept-language": "en" }));
    expect(sig).toEqual({ missing: [], missingBesideForwarded: false, impossible: [], consistent: false });
  });

  it("Accept-Language missing beside the request's own Accept headers weighs a full group; a bare absence half", () => {
    const libraryDefaults = readBrowserHeaders(
      readUserAgent(CHROME_UA),
      normaliseHeaders({ accept: "*/*", "accept-encoding": "gzip, deflate" }),
    );
    expect(libraryDefaults).toMatchObject({ missing: ["Accept-Language"], missingBesideForwarded: true });
    const weights = { perMissingGroup: 1.5, consistent: -1 };
    expect(browserHeaderFindings(libraryDefaults, weights)).toMatchObject([
      { id: "browser_headers_missing", logOdds: 1.5 },
    ]);
    const fetchOnly = readBrowserHeaders(
      readUserAgent(FIREFOX_UA),
      normaliseHeaders({
        "sec-fetch-site": "none",
        "sec-fetch-mode": "navigate",
        "sec-fetch-dest": "document",
      }),
    );
    expect(fetchOnly).toMatchObject({ missing: ["Accept-Language"], missingBesideForwarded: false });
    expect(browserHeaderFindings(fetchOnly, weights)).toMatchObject([
      { id: "browser_headers_missing", logOdds: 0.75 },
    ]);
  });

  it("Fetch Metadata without the client hints Chromium sends on a secure origin, or half a group, is impossible", () => {
    const { "sec-ch-ua": _a, "sec-ch-ua-mobile": _b, "sec-ch-ua-platform": _c, ...noHints } = CHROME_HEADERS;
    expect(readBrowserHeaders(readUserAgent(CHROME_UA), normaliseHeaders(noHints))?.impossible).toHaveLength(
      1,
    );
    const { "sec-fetch-mode": _m, "sec-fetch-dest": _d, ...halfFetch } = CHROME_HEADERS;
    expect(readBrowserHeaders(readUserAgent(CHROME_UA), normaliseHeaders(halfFetch))?.impossible).toEqual([
      "only part of Sec-Fetch-* (sec-fetch-site)",
    ]);
  });

  it("does not expect client hints from Firefox", () => {
    const { "sec-ch-ua": _a, "sec-ch-ua-mobile": _b, "sec-ch-ua-platform": _c, ...firefox } = CHROME_HEADERS;
    expect(readBrowserHeaders(readUserAgent(FIREFOX_UA), normaliseHeaders(firefox))?.consistent).toBe(true);
  });

  it("has nothing to compare without forwarded headers or without a browser claim", () => {
    expect(readBrowserHeaders(readUserAgent(CHROME_UA), undefined)).toBeUndefined();
    expect(readBrowserHeaders(readUserAgent("curl/8"), normaliseHeaders({ a: "b" }))).toBeUndefined();
  });

  it("joins multi-valued headers", () => {
    expect(normaliseHeaders({ "Accept-Language": ["en", "fr"] })).toEqual({ "accept-language": "en, fr" });
  });
});

describe("email", () => {
  it("flags disposable providers and their subdomains from the maintained list", () => {
    expect(isDisposableDomain("mailinator.com")).toBe(true);
    expect(isDisposableDomain("eu.mailinator.com")).toBe(true);
    expect(isDisposableDomain("example.org")).toBe(false);
    expect(readEmail("Someone@Mailinator.com", undefined)).toMatchObject({
      domain: "mailinator.com",
      disposable: true,
    });
  });

  it("hashes the trimmed, lower-cased address so raw and hashed inputs join", () => {
    expect(readEmail(" Ann@Example.ORG ", undefined).hash).toBe(emailHash("ann@example.org"));
    expect(readEmail(undefined, emailHash("ann@example.org").toUpperCase()).hash).toBe(
      emailHash("ann@example.org"),
    );
  });
});

describe("ip truncation", () => {
  it.each([
    ["203.0.113.77", "203.0.113.0/24"],
    ["203.0.113.0/24", "203.0.113.0/24"],
    ["203.0.113.77/32", "203.0.113.0/24"],
    ["10.1.0.0/16", "10.1.0.0/16"],
    ["2001:db8:1234:5678::1", "2001:db8:1234::/48"],
    ["2001:db8:1234::/64", "2001:db8:1234::/48"],
    ["::ffff:198.51.100.9", "198.51.100.0/24"],
  ])("%s → %s", (input, expected) => {
    expect(truncateIp(input)).toBe(expected);
  });

  it.each(["", "not-an-ip", "300.1.1.1", "1.2.3.4/99"])("rejects %j", (input) => {
    expect(truncateIp(input)).toBeUndefined();
  });
});

describe("ip truncation agrees with ipaddr.js's networkAddressFromCIDR", () => {
  it("for any IPv4 or IPv6 address and prefix", () => {
    const v4 = fc.tuple(fc.array(fc.nat(255), { minLength: 4, maxLength: 4 }), fc.nat(32)).map(([o, p]) => ({
      text: `${o.join(".")}/${p}`,
      bits: Math.min(p, 24),
    }));
    const v6 = fc
      .tuple(fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }), fc.nat(128))
      .map(([parts, p]) => ({
        text: `${parts.map((x) => x.toString(16)).join(":")}/${p}`,
        bits: Math.min(p, 48),
      }))
      .filter(({ text }) => !ipaddr.IPv6.parseCIDR(text)[0].isIPv4MappedAddress());
    fc.assert(
      fc.property(fc.oneof(v4, v6), ({ text, bits }) => {
        const [addr] = ipaddr.parseCIDR(text);
        const family = addr.kind() === "ipv4" ? ipaddr.IPv4 : ipaddr.IPv6;
        const expected = `${family.networkAddressFromCIDR(`${addr.toString()}/${bits}`).toString()}/${bits}`;
        expect(truncateIp(text)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("velocity", () => {
  const limits = { ip_network: { perHour: 30 }, email_hash: { perHour: 3, perDay: 10 } };
  const w = { overLimit: 1.5, perDoubling: 1, cap: 4 };
  const weights = { ...DEFAULT_MODEL.weights.velocity, email_hash: w, ip_network: w };
  const emailKey = [{ kind: "email_hash" as const, value: "h" }];

  it("weighs the previous bucket by how much of it still overlaps the window", () => {
    expect(slidingCount({ current: 4, previous: 10, elapsed: 0.25 })).toBe(4 + 7.5);
  });

  it("hits one counter per key and window that has a limit", () => {
    const checks = velocityChecks("t1", "signup", emailKey, limits);
    expect(checks.map((c) => [c.window.text, c.limit])).toEqual([
      ["hour", 3],
      ["day", 10],
    ]);
    expect(velocityChecks("t1", "signup", [{ kind: "session", value: "s" }], limits)).toEqual([]);
  });

  it("becomes evidence only above the limit, growing per doubling up to a cap, once per key (worst window)", () => {
    const checks = velocityChecks("t1", "signup", emailKey, limits);
    const reading = (current: number) => ({ current, previous: 0, elapsed: 0 });
    expect(velocityFindings("signup", checks, [reading(3), reading(3)], weights)).toEqual([]);
    const found = velocityFindings("signup", checks, [reading(6), reading(6)], weights);
    expect(found).toHaveLength(1);
    expect(found[0]?.logOdds).toBeCloseTo(2.5);
    expect(found[0]?.reason).toMatch(/about 6 signup attempts in the last hour, above the limit of 3/);
    const [capped] = velocityFindings("signup", checks, [reading(3000), reading(3000)], weights);
    expect(capped?.logOdds).toBe(4);
  });

  it("hits a key given twice once: one attempt is one count", () => {
    const twice = [
      { kind: "form_value" as const, value: "a" },
      { kind: "form_value" as const, value: "a" },
      { kind: "form_value" as const, value: "b" },
    ];
    const checks = velocityChecks("t1", "quote", twice, { form_value: { perHour: 10, perDay: 50 } });
    expect(checks.map((c) => [c.key.value, c.window.text])).toEqual([
      ["a", "hour"],
      ["a", "day"],
      ["b", "hour"],
      ["b", "day"],
    ]);
  });

  it("several keys of one kind over their limits make one finding, the worst", () => {
    const keys = [
      { kind: "form_value" as const, value: "a" },
      { kind: "form_value" as const, value: "b" },
    ];
    const checks = velocityChecks("t1", "quote", keys, { form_value: { perHour: 10 } });
    const found = velocityFindings(
      "quote",
      checks,
      [
        { current: 80, previous: 0, elapsed: 0 },
        { current: 20, previous: 0, elapsed: 0 },
      ],
      DEFAULT_MODEL.weights.velocity,
    );
    expect(found).toHaveLength(1);
    expect(found[0]?.logOdds).toBe(2);
  });

  it("names counters by a hash that holds no personal value and differs per tenant and action", () => {
    const key = [{ kind: "ip_network" as const, value: "203.0.113.0/24" }];
    const [a] = velocityChecks("t1", "signup", key, limits);
    const [b] = velocityChecks("t2", "signup", key, limits);
    const [c] = velocityChecks("t1", "api_key", key, limits);
    expect(a?.hit.name).not.toContain("203.0.113");
    expect(new Set([a?.hit.name, b?.hit.name, c?.hit.name]).size).toBe(3);
  });

  it("merges a tenant's limits over the built-in ones per window", () => {
    expect(
      mergeLimits({ ip_network: { perMinute: 10, perHour: 30 } }, { ip_network: { perHour: 5 } }),
    ).toEqual({
      ip_network: { perMinute: 10, perHour: 5 },
    });
  });
});
