import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import { SCOPE_FIELD_LABELS } from "./scopeFields.js";
import type { Signal } from "./signal.js";

/** A Map: a name the page sends finds only the scope fields, never an Object.prototype member. */
const SCOPE_FIELDS: ReadonlyMap<string, string> = new Map(Object.entries(SCOPE_FIELD_LABELS));

/** "a", "a and b", "a, b and c". */
const inWords = (items: string[]): string =>
  items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;

/**
 * What the page reported of its own browser (subject.browserSignals, collected by @warden/browser's
 * collectSignals and forwarded by the integrator's server). A page under a bot's control can report
 * anything, so only reports that incriminate count, and a clean one proves nothing:
 * - navigator.webdriver true: a browser driven by WebDriver, Playwright or Puppeteer with their stock
 *   flags (automation);
 * - a worker's user agent naming a headless browser the page's hides (automation);
 * - the page and its own worker reading different values of one browser: script injected into the
 *   page rewrote them, as stealth setups do; so do a few extensions that disguise the browser, so it
 *   raises the risk without calling the request automation (and is not counted next to the above).
 */
export function browserSignalFindings(
  signals: unknown,
  weights: { automation: number; scopeMismatch: number },
): Finding[] {
  if (typeof signals !== "object" || signals === null) return [];
  const { webdriver, workerHeadless, mismatch } = signals as Record<string, unknown>;
  const findings: Finding[] = [];
  if (webdriver === true) {
    findings.push({
      id: "page_webdriver",
      logOdds: weights.automation,
      reason: "The page reports that the browser is driven by automation (navigator.webdriver).",
      automation: true,
    });
  } else if (workerHeadless === true) {
    findings.push({
      id: "page_worker_headless",
      logOdds: weights.automation,
      reason: "A worker of the page reports a headless browser's user agent, which the page itself hides.",
      automation: true,
    });
  }
  // Next to automation the page already admits, a disagreement is the same tool's doing: counted once.
  const differing =
    findings.length > 0 || !Array.isArray(mismatch)
      ? []
      : [
          ...new Set(
            mismatch.flatMap((f) => {
              const label = typeof f === "string" ? SCOPE_FIELDS.get(f) : undefined;
              return label === undefined ? [] : [label];
            }),
          ),
        ];
  if (differing.length > 0) {
    findings.push({
      id: "page_scope_mismatch",
      logOdds: weights.scopeMismatch,
      story: "disguise",
      reason: `The page and a worker it started read a different ${inWords(differing)} of the same browser: script in the page rewrote what it shows (a stealth automation setup, or an extension that disguises the browser).`,
    });
  }
  return findings;
}

/** The reason codes of this signal's findings, with their category. */
const CODES = {
  page_webdriver: "page",
  page_worker_headless: "page",
  page_scope_mismatch: "page",
} as const satisfies Record<string, ReasonCategory>;

export const browserSignalsSignal: Signal<keyof typeof CODES> = {
  name: "the page's report of its browser",
  codes: CODES,
  explainedByDeclaredAgent: true,
  contradictsBrowser: () => true,
  // An automation user agent says the same as navigator.webdriver: counted once.
  findings: ({ ua, req, model: { weights: w } }) =>
    ua.automation
      ? []
      : browserSignalFindings(req.subject.browserSignals, {
          automation: w.uaAutomation,
          scopeMismatch: w.pageScopeMismatch,
        }),
};
