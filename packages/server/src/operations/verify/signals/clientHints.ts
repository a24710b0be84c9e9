import type { HeaderMap } from "./browserHeaders.js";
import type { Finding } from "./findings.js";
import type { UserAgentSignal } from "./userAgent.js";

/**
 * User-Agent Client Hints against the user agent string. Only Chromium browsers send Sec-CH-UA, and
 * its brands carry the same major version as the user agent; Sec-CH-UA-Platform names the same
 * operating system. A mismatch means one of the two was written by a program (a spoofed user agent).
 */
export interface ClientHintsSignal {
  mismatch: string | undefined;
  /** The hints name a headless browser: the same fact as HeadlessChrome in the user agent. */
  headless?: true;
}

/** Brand versions of Sec-CH-UA, without the GREASE brand ("Not A Brand" and its variants). */
function brandMajors(secChUa: string): number[] {
  const out: number[] = [];
  for (const m of secChUa.matchAll(/"([^"]*)"\s*;\s*v\s*=\s*"(\d+)/g)) {
    const brand = m[1] ?? "";
    if (/not.?a.?brand/i.test(brand)) continue;
    out.push(Number(m[2]));
  }
  return out;
}

const PLATFORM_OS: Readonly<Record<string, readonly string[]>> = {
  windows: ["Windows"],
  macos: ["Mac OS"],
  linux: ["Linux", "Ubuntu", "Fedora", "Debian"],
  android: ["Android"],
  "chrome os": ["Chrome OS", "Chromium OS"],
};

export function readClientHints(ua: UserAgentSignal, headers: HeaderMap | undefined): ClientHintsSignal {
  const secChUa = headers?.["sec-ch-ua"];
  if (!headers || secChUa === undefined || !ua.browser) return { mismatch: undefined };
  if (ua.browser.family !== "chromium") {
    return {
      mismatch: `Sec-CH-UA is sent, but the user agent claims ${ua.browser.family}, which never sends it`,
    };
  }
  if (/headless/i.test(secChUa)) {
    return { mismatch: "Sec-CH-UA names a headless browser", headless: true };
  }
  const majors = brandMajors(secChUa);
  if (majors.length > 0 && !majors.includes(ua.browser.major)) {
    return { mismatch: `Sec-CH-UA says version ${majors[0]}, the user agent ${ua.browser.major}` };
  }
  // Sent only when the site asked for it (Accept-CH): its brands carry full versions whose majors
  // must agree with Sec-CH-UA's and with the user agent's.
  const fullList = headers["sec-ch-ua-full-version-list"];
  if (fullList !== undefined) {
    const fullMajors = brandMajors(fullList);
    if (fullMajors.length > 0 && !fullMajors.includes(ua.browser.major)) {
      return {
        mismatch: `Sec-CH-UA-Full-Version-List says version ${fullMajors[0]}, the user agent ${ua.browser.major}`,
      };
    }
    if (/headless/i.test(fullList))
      return { mismatch: "Sec-CH-UA-Full-Version-List names a headless browser", headless: true };
  }
  const platform = headers["sec-ch-ua-platform"]?.replace(/"/g, "").trim().toLowerCase();
  const expected = platform === undefined ? undefined : PLATFORM_OS[platform];
  if (expected && ua.os && !expected.some((os) => ua.os?.startsWith(os))) {
    return { mismatch: `Sec-CH-UA-Platform says ${platform}, the user agent ${ua.os}` };
  }
  return { mismatch: undefined };
}

/** `headless` weighs hints that name a headless browser (an automation user agent's weight). */
export function clientHintsFindings(
  sig: ClientHintsSignal,
  weights: { mismatch: number; headless: number },
): Finding[] {
  if (!sig.mismatch) return [];
  return [
    {
      id: "client_hints_mismatch",
      logOdds: sig.headless ? weights.headless : weights.mismatch,
      reason: `The user agent contradicts the browser's client hints (${sig.mismatch}).`,
      automation: true,
    },
  ];
}
