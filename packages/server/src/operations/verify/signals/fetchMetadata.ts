import type { ReasonCategory } from "../reasonCodes.js";
import type { HeaderMap } from "./browserHeaders.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";

/**
 * Fetch Metadata against the body it came with. A browser sends a JSON body only from a page's
 * script (fetch or XMLHttpRequest: Sec-Fetch-Mode cors or same-origin, Sec-Fetch-Dest empty); an HTML
 * form cannot post JSON, and a navigation (Sec-Fetch-Mode navigate, Sec-Fetch-Dest document, a user
 * activation in Sec-Fetch-User) never carries one. A JSON request with a navigation's metadata was
 * made by a program that copied a page load's headers (the default of header-generator and
 * got-scraping), not by a browser.
 */
export function fetchMetadataFindings(headers: HeaderMap | undefined, weight: number): Finding[] {
  const type = headers?.["content-type"];
  if (type === undefined || !/^application\/(?:[\w.+-]*\+)?json\b/i.test(type.trim())) return [];
  const mode = headers?.["sec-fetch-mode"]?.trim().toLowerCase();
  const dest = headers?.["sec-fetch-dest"]?.trim().toLowerCase();
  const navigation = mode === "navigate" || dest === "document" || headers?.["sec-fetch-user"] !== undefined;
  if (!navigation) return [];
  return [
    {
      id: "fetch_metadata_navigation_json",
      logOdds: weight,
      reason:
        "The request carries a JSON body with a page navigation's Fetch Metadata, which no browser sends together: its headers were copied from a page load by a program.",
      automation: true,
    },
  ];
}

/** The reason codes of this signal's findings, with their category. */
const CODES = { fetch_metadata_navigation_json: "browser" } as const satisfies Record<string, ReasonCategory>;

export const fetchMetadataSignal: Signal<keyof typeof CODES> = {
  name: "Fetch Metadata against the body",
  codes: CODES,
  contradictsBrowser: () => true,
  findings: ({ headers, model: { weights: w } }) => fetchMetadataFindings(headers, w.navigationJson),
};
