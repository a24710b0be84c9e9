import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { readJa4, type TlsWeights, tlsFindings } from "./tlsFingerprint.js";
import { LIBRARY_FINGERPRINTS } from "./tlsStacks.js";
import { readUserAgent } from "./userAgent.js";

/**
 * The client's TLS handshake against the browser it claims. Fingerprints measured on this machine's
 * real clients or published for browsers it cannot run (fixtures/tls-ja4.json).
 */
const fixture = JSON.parse(fs.readFileSync(new URL("./fixtures/tls-ja4.json", import.meta.url), "utf8")) as {
  measured: Record<string, string>;
  published: Record<string, string>;
};
const ja4 = { ...fixture.measured, ...fixture.published };
const W: TlsWeights = { library: 5, notBrowser: 4, otherBrowser: 2.5, unfamiliar: 1 };

const UA = {
  chrome:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
  chromeAndroid:
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile Safari/537.36",
  firefox: "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0",
  safari:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15",
  safariIos:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1",
  chromeIos:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
  firefoxIos:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15",
  curl: "curl/7.88.1",
};
const at = (name: string): string => {
  const value = ja4[name];
  if (value === undefined) throw new Error(`no fixture ${name}`);
  return value;
};
const ids = (fingerprint: string | undefined, ua: string) =>
  tlsFindings(readJa4(fingerprint), readUserAgent(ua), W).map((f) => f.id);

describe("JA4 read from subject.tls", () => {
  it("every fixture parses; its parts are where JA4 puts them", () => {
    for (const value of Object.values(ja4)) expect(readJa4(value)?.text).toBe(value);
    expect(readJa4(at("chromium 156 (Debian, headless)"))).toMatchObject({
      transport: "t",
      version: "13",
      alpn: "h2",
      ciphers: "8daaf6152771",
      extensions: "cb7bf5808d99",
    });
  });

  it("anything else is not a JA4", () => {
    for (const value of [
      "",
      "t13d1517h2",
      "t13d1517h2_8daaf6152771",
      "x13d1517h2_8daaf6152771_cb7bf5808d99",
      "t13d1517h2_8DAAF6152771_cb7bf5808d99",
      `${at("curl 7.88 (Debian 12)")}_x`,
    ])
      expect(readJa4(value)).toBeUndefined();
  });
});

describe("a browser's own handshake: nothing", () => {
  it.each([
    ["chromium 156 (Debian, headless)", UA.chrome],
    ["chromium 156 (Debian), resumed session", UA.chrome],
    ["chrome 120", UA.chrome],
    ["chrome 133 (Android)", UA.chromeAndroid],
    ["firefox-esr 153.7 (Debian, headless)", UA.firefox],
    ["firefox 135", UA.firefox],
    ["firefox 120", UA.firefox],
    ["safari 18 (macOS)", UA.safari],
    ["safari ios 18", UA.safariIos],
    // Every browser on iOS uses Apple's stack, whatever it calls itself.
    ["safari ios 18", UA.chromeIos],
    ["safari ios 18", UA.firefoxIos],
  ])("%s under %s", (name, ua) => {
    expect(ids(at(name), ua)).toEqual([]);
  });

  it("no fingerprint, or QUIC (HTTP/3), is no evidence", () => {
    expect(ids(undefined, UA.chrome)).toEqual([]);
    expect(ids("q13d0312h3_55b375c5d22e_06cda9e17597", UA.chrome)).toEqual([]);
  });
});

describe("a program's handshake under a browser's user agent: automation", () => {
  it.each([
    ["undici 7.30 fetch", UA.chrome],
    ["undici 7.30 fetch", UA.safariIos],
    ["undici 7.30 fetch, resumed session", UA.chrome],
    ["node:https get", UA.firefox],
    ["got-scraping 4.2.1, chrome headers", UA.chrome],
    ["got-scraping 4.2.1, firefox headers", UA.firefox],
    ["got-scraping 4.2.1, safari headers", UA.safari],
    ["curl 7.88 (Debian 12)", UA.chrome],
    ["python 3.11 urllib", UA.safariIos],
    ["go net/http", UA.chromeAndroid],
  ])("%s under %s", (name, ua) => {
    const [finding, ...rest] = tlsFindings(readJa4(at(name)), readUserAgent(ua), W);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ id: "tls_library", automation: true, logOdds: W.library });
  });

  it("a handshake without TLS 1.3 or without HTTP/2, from a stack Warden does not list", () => {
    expect(ids("t13d1812h1_0123456789ab_0123456789ab", UA.chrome)).toEqual(["tls_not_browser"]);
    expect(ids("t12d1812h2_0123456789ab_0123456789ab", UA.safari)).toEqual(["tls_not_browser"]);
    expect(ids("t13d181200_0123456789ab_0123456789ab", UA.firefox)).toEqual(["tls_not_browser"]);
  });

  it("a library with its signature algorithms or session changed is still its cipher suites", () => {
    expect(ids("t13d1613h2_1711a4c0508c_0123456789ab", UA.chrome)).toEqual(["tls_library"]);
  });

  it("every library's recorded fingerprints carry its cipher suites", () => {
    for (const lib of LIBRARY_FINGERPRINTS)
      for (const seen of lib.seen) expect(readJa4(seen)?.ciphers).toBe(lib.ciphers);
  });

  it("a library's handshake is a program's whatever the user agent says: its own, none, or one that names no browser", () => {
    for (const ua of [
      UA.curl,
      "",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)",
      "AcmeShop/5.2.1 (Linux; Android 14; Pixel 8) okhttp/4.12.0",
    ]) {
      expect({ ua, ids: ids(at("curl 7.88 (Debian 12)"), ua) }).toEqual({ ua, ids: ["tls_library"] });
    }
  });
});

describe("another browser's stack, or cipher suites Warden does not know", () => {
  it("Chromium's handshake under Firefox's or Safari's user agent: a disguise, not automation", () => {
    for (const ua of [UA.firefox, UA.safari]) {
      const [finding] = tlsFindings(readJa4(at("chromium 156 (Debian, headless)")), readUserAgent(ua), W);
      expect(finding).toMatchObject({ id: "tls_other_browser", logOdds: W.otherBrowser });
      expect(finding?.automation).not.toBe(true);
    }
    expect(ids(at("firefox 135"), UA.chrome)).toEqual(["tls_other_browser"]);
  });

  it("unknown cipher suites with TLS 1.3 and HTTP/2 (TLS inspection, a new release): weak, not automation", () => {
    const [finding] = tlsFindings(
      readJa4("t13d1715h2_0123456789ab_0123456789ab"),
      readUserAgent(UA.firefox),
      W,
    );
    expect(finding).toMatchObject({ id: "tls_unfamiliar", logOdds: W.unfamiliar });
    expect(finding?.automation).not.toBe(true);
  });
});
