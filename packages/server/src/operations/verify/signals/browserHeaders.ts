import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";
import type { UserAgentSignal } from "./userAgent.js";

export type HeaderMap = Readonly<Record<string, string>>;

/**
 * Header names lower-cased, multi-valued headers joined as HTTP does. The map has no prototype, so a
 * header a request did not send is absent whatever its name: `headers.constructor` is undefined, not
 * Object (every signal and the Web Bot Auth verifier look names up in it).
 */
export function normaliseHeaders(
  headers: Record<string, string | string[]> | undefined,
): HeaderMap | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) {
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * What a browser's navigation request carries, by family, platform and transport (the table in
 * docs/browser-headers.md, with its sources):
 * - Accept-Language: every browser, always.
 * - Sec-Fetch-Site/-Mode/-Dest: Chromium 76+, Firefox 90+, Safari 16.4+ (and every iOS browser from
 *   iOS 16.4: they are all WebKit), but only to potentially trustworthy origins (HTTPS, localhost),
 *   and proxies may strip `sec-*`. Sent as a group: one without the others is not a browser.
 * - Sec-CH-UA/-Mobile/-Platform: Chromium 89+ on secure origins only, never on iOS (CriOS and EdgiOS
 *   are WebKit), never Firefox or Safari.
 * Absence is evidence only where the request proves the header would have come: client hints are
 * expected from a Chromium user agent only when Fetch Metadata show a secure origin and forwarded
 * `sec-*` headers; nothing is expected of a request that forwarded no headers besides the user agent.
 */
const FETCH_METADATA = ["sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest"] as const;
const CLIENT_HINTS = ["sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform"] as const;
/** Headers that say nothing about what the integration forwarded. */
const NOT_FORWARDING_EVIDENCE = new Set(["user-agent", "host", "content-type", "content-length"]);

export interface BrowserHeaderSignal {
  /** Absences that real browsers can show too (a privacy tool, an unusual setup): weak evidence. */
  missing: string[];
  /**
   * Accept-Language is missing from a request whose own Accept or Accept-Encoding were forwarded: the
   * integration passes the request's headers on, and every browser sends Accept-Language with them
   * (an HTTP library's defaults look exactly like this). Stronger than a bare absence, yet not proof
   * of a program: an integration may forward a hand-picked set.
   */
  missingBesideForwarded: boolean;
  /** Combinations no browser of the claimed family sends: positive evidence of a program. */
  impossible: string[];
  /**
   * Headers only a browser sends (Sec-Fetch-*, Sec-CH-UA) under a user agent that names no browser: a
   * browser's request, or a copy of one, whose user agent was edited or removed. Not a program's proof
   * on its own (a person's user-agent switcher does it too), but never the silence of a claim unmade.
   */
  disguised: string | undefined;
  /** Everything the claimed browser sends on this transport is there. */
  consistent: boolean;
}

const ios = (ua: UserAgentSignal) => ua.os === "iOS";

const BROWSER_ONLY = [...FETCH_METADATA, ...CLIENT_HINTS] as const;

/**
 * Undefined when there is nothing to compare: no headers were forwarded, or the user agent names the
 * program it is. A user agent that names no browser (missing, unrecognised, an app) is held to what
 * holds for every client: no partial Sec-Fetch-* or Sec-CH-UA group, and no browser-only header.
 */
export function readBrowserHeaders(
  ua: UserAgentSignal,
  headers: HeaderMap | undefined,
): BrowserHeaderSignal | undefined {
  if (!headers || ua.automation) return undefined;
  const forwarded = Object.keys(headers).filter((h) => !h.startsWith(":") && !NOT_FORWARDING_EVIDENCE.has(h));
  if (forwarded.length === 0) return undefined;
  if (!ua.browser) {
    const impossible = partialGroups(headers);
    const browserOnly = BROWSER_ONLY.filter((h) => h in headers);
    return {
      missing: [],
      missingBesideForwarded: false,
      impossible,
      disguised:
        impossible.length === 0 && browserOnly.length > 0
          ? `${browserOnly.join(", ")}, which only a browser sends, under a user agent that names no browser`
          : undefined,
      consistent: false,
    };
  }
  const browser = ua.browser;
  const missing: string[] = [];
  const impossible: string[] = [];
  const noLanguage = !("accept-language" in headers);
  if (noLanguage) missing.push("Accept-Language");
  const missingBesideForwarded = noLanguage && ("accept" in headers || "accept-encoding" in headers);

  // Groups no client sends in part, whatever browser (or version) its user agent claims: a claim of
  // a browser that predates a group never excuses half of it.
  impossible.push(...partialGroups(headers));
  const fetchSent = FETCH_METADATA.filter((h) => h in headers);
  const secureAndForwarded = fetchSent.length === FETCH_METADATA.length;
  const sendsHints = browser.family === "chromium" && browser.major >= 89 && !ios(ua);
  const hintsSent = CLIENT_HINTS.filter((h) => h in headers);
  if (sendsHints && secureAndForwarded && hintsSent.length === 0) {
    impossible.push(
      "Sec-Fetch-* from a secure origin without the Sec-CH-UA client hints Chromium sends there",
    );
  }
  const sendsFetch =
    ios(ua) ||
    (browser.family === "chromium" && browser.major >= 76) ||
    (browser.family === "firefox" && browser.major >= 90) ||
    (browser.family === "safari" && browser.major >= 17);
  const consistent =
    missing.length === 0 &&
    impossible.length === 0 &&
    (!sendsFetch || secureAndForwarded) &&
    (!sendsHints || hintsSent.length === CLIENT_HINTS.length);
  return { missing, missingBesideForwarded, impossible, disguised: undefined, consistent };
}

const partialFetch = (sent: readonly string[]) => `only part of Sec-Fetch-* (${sent.join(", ")})`;

/** Groups every client sends whole or not at all, whatever it is. */
function partialGroups(headers: HeaderMap): string[] {
  const out: string[] = [];
  const fetchSent = FETCH_METADATA.filter((h) => h in headers);
  if (fetchSent.length > 0 && fetchSent.length < FETCH_METADATA.length) out.push(partialFetch(fetchSent));
  const hintsSent = CLIENT_HINTS.filter((h) => h in headers);
  if (hintsSent.length > 0 && hintsSent.length < CLIENT_HINTS.length) {
    out.push(`only part of Sec-CH-UA (${hintsSent.join(", ")})`);
  }
  return out;
}

export function browserHeaderFindings(
  sig: BrowserHeaderSignal | undefined,
  weights: { perMissingGroup: number; consistent: number },
): Finding[] {
  if (!sig) return [];
  if (sig.consistent) {
    return [
      {
        id: "browser_consistent",
        logOdds: weights.consistent,
        reason: "The browser headers match the browser the user agent claims.",
      },
    ];
  }
  const findings: Finding[] = [];
  if (sig.disguised) {
    findings.push({
      id: "browser_headers_impossible",
      logOdds: weights.perMissingGroup * 2,
      reason: `The request carries ${sig.disguised}.`,
    });
  }
  if (sig.impossible.length > 0) {
    findings.push({
      id: "browser_headers_impossible",
      logOdds: weights.perMissingGroup * 2,
      reason: `The headers are not ones the claimed browser sends: ${sig.impossible.join("; ")}.`,
      automation: true,
    });
  }
  if (sig.missing.length > 0) {
    findings.push({
      id: "browser_headers_missing",
      logOdds: sig.missingBesideForwarded ? weights.perMissingGroup : weights.perMissingGroup / 2,
      reason: sig.missingBesideForwarded
        ? "The request's Accept headers were forwarded without the Accept-Language every browser sends with them."
        : `The request lacks headers the claimed browser normally sends (${sig.missing.join(", ")}).`,
    });
  }
  return findings;
}

/**
 * The forwarded headers against the claimed browser. Consistent headers show a real browser, not a
 * person at it: next to another signal's evidence that automation drives it or that it is disguised
 * (Signal.contradictsBrowser) its findings are dropped (evidence.ts).
 */
/** The reason codes of this signal's findings, with their category. */
const CODES = {
  browser_headers_missing: "browser",
  browser_headers_impossible: "browser",
  browser_consistent: "browser",
} as const satisfies Record<string, ReasonCategory>;

export const browserHeadersSignal: Signal<keyof typeof CODES> = {
  name: "browser headers",
  codes: CODES,
  findings: ({ ua, headers, model: { weights: w } }) =>
    browserHeaderFindings(readBrowserHeaders(ua, headers), {
      perMissingGroup: w.headersMissingPerGroup,
      consistent: w.browserConsistent,
    }),
};
