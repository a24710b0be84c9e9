import type { Finding } from "./findings.js";
import type { UserAgentSignal } from "./userAgent.js";

export type HeaderMap = Readonly<Record<string, string>>;

/** Header names lower-cased, multi-valued headers joined as HTTP does. */
export function normaliseHeaders(
  headers: Record<string, string | string[]> | undefined,
): HeaderMap | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

interface ExpectedGroup {
  id: string;
  headers: readonly string[];
  label: string;
  /** Whether the claimed browser sends this group on every request to a site. */
  sentBy(browser: NonNullable<UserAgentSignal["browser"]>): boolean;
}

/**
 * Headers each browser sends by default (Fetch Metadata shipped in Chromium 76, Firefox 90 and
 * Safari 16.4 — checked from Safari 17, as only the major version is compared; User-Agent Client Hints low-entropy headers in Chromium 89 on secure origins).
 */
const EXPECTED: readonly ExpectedGroup[] = [
  { id: "accept_language", headers: ["accept-language"], label: "Accept-Language", sentBy: () => true },
  {
    id: "fetch_metadata",
    headers: ["sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest"],
    label: "Sec-Fetch-*",
    sentBy: (b) =>
      (b.family === "chromium" && b.major >= 76) ||
      (b.family === "firefox" && b.major >= 90) ||
      (b.family === "safari" && b.major >= 17),
  },
  {
    id: "client_hints",
    headers: ["sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform"],
    label: "Sec-CH-UA client hints",
    sentBy: (b) => b.family === "chromium" && b.major >= 89,
  },
];

export interface BrowserHeaderSignal {
  /** Header groups the claimed browser always sends and this request lacks. */
  missing: string[];
  /** A browser user agent with every header group that browser sends. */
  consistent: boolean;
}

/** Undefined when there is nothing to compare: no headers were forwarded, or no browser is claimed. */
export function readBrowserHeaders(
  ua: UserAgentSignal,
  headers: HeaderMap | undefined,
): BrowserHeaderSignal | undefined {
  if (!headers || Object.keys(headers).length === 0 || !ua.browser || ua.automation) return undefined;
  const browser = ua.browser;
  const missing = EXPECTED.filter((g) => g.sentBy(browser) && g.headers.some((h) => !(h in headers))).map(
    (g) => g.label,
  );
  return { missing, consistent: missing.length === 0 };
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
  return [
    {
      id: "browser_headers_missing",
      logOdds: weights.perMissingGroup * sig.missing.length,
      reason: `The user agent claims a browser but the request lacks headers that browser always sends (${sig.missing.join(", ")}).`,
      automation: true,
    },
  ];
}
