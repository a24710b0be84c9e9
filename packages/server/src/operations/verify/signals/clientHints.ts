import type { ReasonCategory } from "../reasonCodes.js";
import type { HeaderMap } from "./browserHeaders.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";
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
  /**
   * The user agent and the hints name different browsers, versions or platforms: what a user-agent
   * switcher extension does (it rewrites the user agent, not the hints) as well as a program. Brand
   * lists in a form no Chromium writes, and headless names, are a program's alone.
   */
  disguise?: true;
}

const GREASE = /not.?a.?brand/i;

type Brand = { brand: string; version: string };

/** The brand/version pairs of a Sec-CH-UA structured list (RFC 8941 strings with a `v` parameter). */
function brandList(secChUa: string): Brand[] {
  return [...secChUa.matchAll(/"([^"]*)"\s*;\s*v\s*=\s*"([^"]*)"/g)].map((m) => ({
    brand: m[1] ?? "",
    version: m[2] ?? "",
  }));
}

/** Major versions of a brand list, without the GREASE brand ("Not A Brand" and its variants). */
function brandMajors(brands: readonly Brand[]): number[] {
  return brands
    .filter((b) => !GREASE.test(b.brand) && /^\d+/.test(b.version))
    .map((b) => Number.parseInt(b.version, 10));
}

/**
 * Chromium's GREASE brand (components/embedder_support/user_agent_utils.cc, the "updated algorithm"
 * default since Chromium 103, WICG UA-CH "create arbitrary brands"): "Not" + c1 + "A" + c2 + "Brand",
 * c1 and c2 picked from eleven characters and the version from 8, 99, 24, both seeded by the major
 * version, so every Chromium of one major version sends the same one. What the eval and the tests
 * generate; the check below accepts any brand of this shape (a field trial may override the seeded
 * pick), not only the seeded one.
 */
const GREASE_CHARS = [" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_"] as const;
const GREASE_VERSIONS = ["8", "99", "24"] as const;
export function chromiumGrease(major: number): { brand: string; version: string } {
  const pick = <T>(list: readonly T[], i: number) => list[i % list.length] as T;
  return {
    brand: `Not${pick(GREASE_CHARS, major)}A${pick(GREASE_CHARS, major + 1)}Brand`,
    version: pick(GREASE_VERSIONS, major),
  };
}

const UPDATED_GREASE = /^Not[ ():\-./;=?_]A[ ():\-./;=?_]Brand$/;
/**
 * From this Chromium major version on, only the updated GREASE algorithm exists: the enterprise
 * policy that restored the old one (" Not A;Brand", version 99, UserAgentClientHintsGREASEUpdateEnabled)
 * was deprecated after M126 and its preference retired in February 2025 (M134).
 */
export const UPDATED_GREASE_ONLY_FROM = 135;

/**
 * What is wrong with the GREASE brand of a Chromium's brand list, if anything: every Chromium sends
 * exactly one, and a current one only in the updated form. Stealth setups that write the client
 * hints themselves often copy the retired " Not A;Brand" (puppeteer-extra-plugin-stealth 2.11 does;
 * docs/browser-headers.md) or leave it out.
 */
function greaseProblem(brands: readonly Brand[], header: string): string | undefined {
  const chromium = brands.find((b) => b.brand === "Chromium");
  const major = chromium ? Number.parseInt(chromium.version, 10) : Number.NaN;
  if (!(major >= UPDATED_GREASE_ONLY_FROM)) return undefined;
  const grease = brands.filter((b) => GREASE.test(b.brand));
  if (grease.length === 0) return `${header} has no GREASE brand, which every Chromium ${major} sends`;
  const g = grease[0] as Brand;
  const versionOk = (GREASE_VERSIONS as readonly string[]).includes(g.version.split(".")[0] ?? "");
  if (grease.length > 1 || !UPDATED_GREASE.test(g.brand) || !versionOk) {
    return `${header} carries the GREASE brand "${g.brand}";v="${g.version}", a form Chromium ${major} never sends`;
  }
  return undefined;
}

/** Sec-CH-UA-Platform's values and the OS names ua-parser-js reads; a Map, so the header's text finds nothing else. */
const PLATFORM_OS: ReadonlyMap<string, readonly string[]> = new Map([
  ["windows", ["Windows"]],
  ["macos", ["Mac OS"]],
  ["linux", ["Linux", "Ubuntu", "Fedora", "Debian"]],
  ["android", ["Android"]],
  ["chrome os", ["Chrome OS", "Chromium OS"]],
]);

export function readClientHints(ua: UserAgentSignal, headers: HeaderMap | undefined): ClientHintsSignal {
  const secChUa = headers?.["sec-ch-ua"];
  if (!headers || secChUa === undefined || !ua.browser) return { mismatch: undefined };
  if (ua.browser.family !== "chromium") {
    return {
      mismatch: `Sec-CH-UA is sent, but the user agent claims ${ua.browser.family}, which never sends it`,
      disguise: true,
    };
  }
  if (/headless/i.test(secChUa)) {
    return { mismatch: "Sec-CH-UA names a headless browser", headless: true };
  }
  const brands = brandList(secChUa);
  const majors = brandMajors(brands);
  if (majors.length > 0 && !majors.includes(ua.browser.major)) {
    return {
      mismatch: `Sec-CH-UA says version ${majors[0]}, the user agent ${ua.browser.major}`,
      disguise: true,
    };
  }
  const grease = greaseProblem(brands, "Sec-CH-UA");
  if (grease) return { mismatch: grease };
  // Sent only when the site asked for it (Accept-CH): its brands carry full versions whose majors
  // must agree with Sec-CH-UA's and with the user agent's.
  const fullList = headers["sec-ch-ua-full-version-list"];
  if (fullList !== undefined) {
    const fullBrands = brandList(fullList);
    const fullMajors = brandMajors(fullBrands);
    if (fullMajors.length > 0 && !fullMajors.includes(ua.browser.major)) {
      return {
        mismatch: `Sec-CH-UA-Full-Version-List says version ${fullMajors[0]}, the user agent ${ua.browser.major}`,
        disguise: true,
      };
    }
    if (/headless/i.test(fullList))
      return { mismatch: "Sec-CH-UA-Full-Version-List names a headless browser", headless: true };
    const fullGrease = greaseProblem(fullBrands, "Sec-CH-UA-Full-Version-List");
    if (fullGrease) return { mismatch: fullGrease };
  }
  const platform = headers["sec-ch-ua-platform"]?.replace(/"/g, "").trim().toLowerCase();
  const expected = platform === undefined ? undefined : PLATFORM_OS.get(platform);
  if (expected && ua.os && !expected.some((os) => ua.os?.startsWith(os))) {
    return { mismatch: `Sec-CH-UA-Platform says ${platform}, the user agent ${ua.os}`, disguise: true };
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
      automation: sig.disguise !== true,
      ...(sig.disguise === true ? { story: "disguise" as const } : {}),
    },
  ];
}

/** The reason codes of this signal's findings, with their category. */
const CODES = { client_hints_mismatch: "browser" } as const satisfies Record<string, ReasonCategory>;

export const clientHintsSignal: Signal<keyof typeof CODES> = {
  name: "client hints",
  codes: CODES,
  contradictsBrowser: () => true,
  findings: ({ ua, headers, model: { weights: w } }) =>
    clientHintsFindings(readClientHints(ua, headers), {
      mismatch: w.clientHintsMismatch,
      headless: w.uaAutomation,
    }),
};
