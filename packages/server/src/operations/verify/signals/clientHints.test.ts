import { describe, expect, it } from "vitest";
import { CHROME_HEADERS, CHROME_UA } from "../../../testing/harness.js";
import { normaliseHeaders } from "./browserHeaders.js";
import { chromiumGrease, readClientHints, UPDATED_GREASE_ONLY_FROM } from "./clientHints.js";
import { readUserAgent } from "./userAgent.js";

const FIREFOX_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";
const MAC_CHROME_UA =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

describe("client hints against the user agent", () => {
  it("finds nothing when Chrome's hints match its user agent", () => {
    expect(
      readClientHints(readUserAgent(CHROME_UA), normaliseHeaders(CHROME_HEADERS)).mismatch,
    ).toBeUndefined();
  });

  it("a Firefox user agent with Sec-CH-UA was written by a program", () => {
    expect(readClientHints(readUserAgent(FIREFOX_UA), normaliseHeaders(CHROME_HEADERS)).mismatch).toMatch(
      /firefox/,
    );
  });

  it("a brand version other than the user agent's", () => {
    const headers = { ...CHROME_HEADERS, "sec-ch-ua": '"Chromium";v="120", "Not_A Brand";v="24"' };
    expect(readClientHints(readUserAgent(CHROME_UA), normaliseHeaders(headers)).mismatch).toMatch(/120.*131/);
  });

  it("a platform other than the user agent's operating system", () => {
    expect(readClientHints(readUserAgent(MAC_CHROME_UA), normaliseHeaders(CHROME_HEADERS)).mismatch).toMatch(
      /windows.*Mac OS/,
    );
  });
});

/** Chrome 156 on Windows as a person's browser sends it, its GREASE brand from Chromium's algorithm. */
const CHROME_156_UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const withBrands = (secChUa: string) => normaliseHeaders({ ...CHROME_HEADERS, "sec-ch-ua": secChUa });

describe("Sec-CH-UA's GREASE brand (Chromium's user_agent_utils.cc, updated algorithm)", () => {
  it("chromiumGrease reproduces the brands real browsers send (captures named in docs/browser-headers.md)", () => {
    expect(chromiumGrease(156)).toEqual({ brand: "Not:A-Brand", version: "8" }); // Debian Chromium 156
    expect(chromiumGrease(131)).toEqual({ brand: "Not_A Brand", version: "24" }); // Chrome, Edge 131
    expect(chromiumGrease(122)).toEqual({ brand: "Not(A:Brand", version: "24" }); // Samsung Internet 26
    expect(chromiumGrease(128)).toEqual({ brand: "Not;A=Brand", version: "24" }); // Opera GX (Chromium 128)
    expect(chromiumGrease(130)).toEqual({ brand: "Not?A_Brand", version: "99" }); // Samsung Internet 28
  });

  it("no Chromium from the updated-only versions on is flagged, whatever its brand order or channel", () => {
    for (let major = UPDATED_GREASE_ONLY_FROM; major < 400; major++) {
      const g = chromiumGrease(major);
      const ua = CHROME_156_UA.replace("156.0.0.0", `${major}.0.0.0`);
      for (const list of [
        `"Google Chrome";v="${major}", "Chromium";v="${major}", "${g.brand}";v="${g.version}"`,
        `"${g.brand}";v="${g.version}", "Chromium";v="${major}"`,
      ]) {
        const headers = normaliseHeaders({
          ...CHROME_HEADERS,
          "sec-ch-ua": list,
          "sec-ch-ua-full-version-list": list.replace(/v="(\d+)"/g, 'v="$1.0.0.0"'),
        });
        expect(readClientHints(readUserAgent(ua), headers).mismatch, list).toBeUndefined();
      }
    }
  });

  it("the retired ' Not A;Brand' on a current Chromium is written by a program (puppeteer-extra-plugin-stealth's capture)", () => {
    const sig = readClientHints(
      readUserAgent(CHROME_156_UA),
      withBrands('" Not A;Brand";v="99", "Chromium";v="156", "Google Chrome";v="156"'),
    );
    expect(sig.mismatch).toMatch(/GREASE brand " Not A;Brand";v="99", a form Chromium 156 never sends/);
  });

  it("no GREASE brand, two of them, or a version outside 8, 24 and 99 on a current Chromium", () => {
    for (const list of [
      '"Google Chrome";v="156", "Chromium";v="156"',
      '"Not:A-Brand";v="8", "Not_A Brand";v="24", "Chromium";v="156"',
      '"Not:A-Brand";v="10", "Chromium";v="156"',
      '"Not A Brand Really";v="8", "Chromium";v="156"',
    ]) {
      expect(readClientHints(readUserAgent(CHROME_156_UA), withBrands(list)).mismatch, list).toMatch(
        /GREASE/,
      );
    }
  });

  it("before the old algorithm was retired, its brand was a real browser's (an enterprise policy restored it)", () => {
    const ua = CHROME_156_UA.replace("156.0.0.0", "120.0.0.0");
    expect(
      readClientHints(readUserAgent(ua), withBrands('" Not A;Brand";v="99", "Chromium";v="120"')).mismatch,
    ).toBeUndefined();
  });
});
