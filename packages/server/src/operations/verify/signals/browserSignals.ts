import type { Finding } from "./findings.js";

/**
 * What the page reported of its own browser (subject.browserSignals, collected by @warden/browser's
 * collectSignals and forwarded by the integrator's server). A page under a bot's control can report
 * anything, so only reports that incriminate count: navigator.webdriver is true in a browser driven
 * by WebDriver, Playwright or Puppeteer with their stock flags; false proves nothing.
 */
export function browserSignalFindings(signals: unknown, weight: number): Finding[] {
  if (typeof signals !== "object" || signals === null) return [];
  if ((signals as { webdriver?: unknown }).webdriver !== true) return [];
  return [
    {
      id: "page_webdriver",
      logOdds: weight,
      reason: "The page reports that the browser is driven by automation (navigator.webdriver).",
      automation: true,
    },
  ];
}
