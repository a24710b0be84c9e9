import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { normaliseHeaders } from "./browserHeaders.js";
import { languageOverridden } from "./headerOrder.js";
import { readUserAgent } from "./userAgent.js";

/** Header orders captured from Debian's Chromium 156 (the file says how). */
const captures = JSON.parse(
  readFileSync(new URL("./fixtures/chromium-header-order.json", import.meta.url), "utf8"),
) as { chromium: Record<string, string[]>; devtoolsLanguageOverride: Record<string, string[]> };

const CHROME_UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const FIREFOX_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";
const CRIOS_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1";

/** A header object whose keys come in `names`' order, as JSON carries them to verify. */
const inOrder = (names: readonly string[]) =>
  normaliseHeaders(Object.fromEntries(names.map((n) => [n, n === "user-agent" ? CHROME_UA : "x"])));
const overridden = (names: readonly string[], ua = CHROME_UA) =>
  languageOverridden(readUserAgent(ua), inOrder(names));

describe("Accept-Language's place in a Chromium request", () => {
  it.each(Object.entries(captures.chromium))("Chromium's own order is not an override: %s", (_, names) => {
    expect(overridden(names)).toBe(false);
  });

  it.each(Object.entries(captures.devtoolsLanguageOverride))(
    "the DevTools protocol's language override is found: %s",
    (_, names) => {
      expect(overridden(names)).toBe(true);
    },
  );

  const stealth = captures.devtoolsLanguageOverride[
    "navigation, puppeteer-extra-plugin-stealth 2.11.2 through playwright-extra 4.3.6"
  ] as string[];

  it("an order the integration made is not read: sorted, or @warden/client's former allow-list order", () => {
    expect(overridden([...stealth].sort())).toBe(false);
    const allowList = ["accept", "accept-encoding", "accept-language", "sec-fetch-site", "sec-fetch-mode"];
    expect(
      overridden([
        ...allowList,
        "sec-fetch-dest",
        "sec-ch-ua",
        "sec-ch-ua-mobile",
        "sec-ch-ua-platform",
        "user-agent",
      ]),
    ).toBe(false);
  });

  it("is read only when every header of the chain was forwarded", () => {
    for (const dropped of [
      "user-agent",
      "accept",
      "sec-fetch-site",
      "sec-fetch-mode",
      "sec-fetch-dest",
      "accept-encoding",
    ]) {
      expect(overridden(stealth.filter((n) => n !== dropped))).toBe(false);
    }
  });

  it("a shuffled order almost never passes for an override (what an integration that loses the order risks)", () => {
    // Seeded shuffles of a person's navigation headers: the chain must come out in Chromium's order
    // and Accept-Language between User-Agent and Accept, a chance of about 1 in 5,000.
    const person = captures.chromium.navigation as string[];
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let hits = 0;
    for (let i = 0; i < 20_000; i++) {
      const shuffled = [...person];
      for (let j = shuffled.length - 1; j > 0; j--) {
        const k = Math.floor(rnd() * (j + 1));
        [shuffled[j], shuffled[k]] = [shuffled[k] as string, shuffled[j] as string];
      }
      if (overridden(shuffled)) hits++;
    }
    expect(hits / 20_000).toBeLessThan(0.001);
  });

  it("applies to Chromium user agents only: Firefox's own order and iOS browsers (WebKit) are not read", () => {
    expect(overridden(stealth, FIREFOX_UA)).toBe(false);
    expect(overridden(stealth, CRIOS_UA)).toBe(false);
  });
});
