import type { ReasonCategory } from "../reasonCodes.js";
import type { HeaderMap } from "./browserHeaders.js";
import type { Finding } from "./findings.js";
import { languageOverridden } from "./headerOrder.js";
import type { Signal } from "./signal.js";

/**
 * The page's languages against the request's Accept-Language. A browser sends the languages its
 * page reads (navigator.languages) as Accept-Language, in the same order: Chromium and Firefox build
 * the header from that list, and Chrome's and Brave's reduced headers keep its first language. So the
 * header's first language is among the page's, by its primary subtag (`en-GB` meets `en`). A header
 * whose first language the page does not know came from somewhere else than the page's browser: an
 * HTTP client that sends a browser's headers and a page report made up or recorded elsewhere, or a
 * stealth setup that rewrites navigator.languages in the page and not the header (or the header and
 * not the page).
 *
 * Read only when both are there, and not when an extension rewrote the header (headerOrder.ts: that
 * is its own finding). A page can report anything, so an agreement lowers nothing.
 */

export interface PageLanguageWeights {
  /** Accept-Language's first language absent from the page's navigator.languages. */
  mismatch: number;
}

/** A language tag's primary subtag, lower-cased (`en` of `en-US;q=0.9`), or "" when it is not one. */
function primary(tag: string): string {
  const subtag = (tag.split(";")[0] ?? "").trim().split(/[-_]/)[0]?.toLowerCase() ?? "";
  return /^[a-z]{2,8}$/.test(subtag) ? subtag : "";
}

/** The header's first language and the page's languages, by primary subtag; undefined when either is missing. */
function languagesOf(headers: HeaderMap | undefined, pageLanguages: string | undefined) {
  const header = headers?.["accept-language"];
  if (header === undefined || pageLanguages === undefined) return undefined;
  const first = primary(header.split(",")[0] ?? "");
  const page = new Set(pageLanguages.split(",").map(primary));
  page.delete("");
  if (first === "" || page.size === 0) return undefined;
  return { first, page };
}

/** The reason codes of this signal's findings, with their category. */
const CODES = { page_language_mismatch: "page" } as const satisfies Record<string, ReasonCategory>;

export const pageLanguageSignal: Signal<keyof typeof CODES> = {
  name: "page languages against Accept-Language",
  codes: CODES,
  // The headers are not the page's browser's: their consistency shows nothing.
  contradictsBrowser: () => true,
  findings({ headers, environment, ua, model }): Finding[] {
    const languages = languagesOf(headers, environment?.languages);
    if (!languages || languages.page.has(languages.first) || languageOverridden(ua, headers)) return [];
    return [
      {
        id: "page_language_mismatch",
        logOdds: model.weights.pageLanguage.mismatch,
        reason: `The request asks for a language (${languages.first}) that its page's browser does not list (${[...languages.page].slice(0, 6).join(", ")}): the headers and the page report came from different places.`,
        story: "disguise",
      },
    ];
  },
};
