import { describe, expect, it } from "vitest";
import { CHROME_HEADERS, CHROME_UA } from "../../../testing/harness.js";
import { normaliseHeaders } from "./browserHeaders.js";
import { readClientHints } from "./clientHints.js";
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
