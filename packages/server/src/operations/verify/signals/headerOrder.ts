import type { ReasonCategory } from "../reasonCodes.js";
import type { HeaderMap } from "./browserHeaders.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";
import type { UserAgentSignal } from "./userAgent.js";

/**
 * Where a Chromium request carries Accept-Language. Chromium's network stack adds Accept-Encoding
 * and then Accept-Language after every other header, on navigations, form posts and fetches alike;
 * an extension that rewrites the value (declarativeNetRequest) leaves it there, and a language the
 * page's own script sets, or Chromium's reduced Accept-Language, goes before User-Agent. The
 * DevTools protocol's override (Emulation/Network.setUserAgentOverride with acceptLanguage, which
 * puppeteer-extra-plugin-stealth always sends, and Playwright's `locale` and extraHTTPHeaders)
 * writes it among the browser's own headers instead: right after User-Agent, before Accept.
 * Captured from Debian's Chromium 156 (docs/browser-headers.md, fixtures/chromium-header-order.json).
 *
 * The order is read only where it evidently reached Warden as the browser sent it: User-Agent,
 * Accept, Sec-Fetch-Site, Sec-Fetch-Mode, Sec-Fetch-Dest and Accept-Encoding all forwarded and in
 * Chromium's order. An integration that sorts the headers, lists them in its own order or loses
 * their order (Fetch API Headers iterate sorted) never meets that, so its requests are not read.
 */
const CHROMIUM_CHAIN = [
  "user-agent",
  "accept",
  "sec-fetch-site",
  "sec-fetch-mode",
  "sec-fetch-dest",
  "accept-encoding",
] as const;

/** True when Accept-Language sits where only the DevTools protocol's override puts it. */
export function languageOverridden(ua: UserAgentSignal, headers: HeaderMap | undefined): boolean {
  if (!headers || ua.browser?.family !== "chromium" || ua.os === "iOS" || ua.automation) return false;
  const names = Object.keys(headers);
  const at = (name: string) => names.indexOf(name);
  const chain = CHROMIUM_CHAIN.map(at);
  const inChromiumOrder = chain.every((pos, i) => pos >= 0 && (i === 0 || pos > (chain[i - 1] as number)));
  const language = at("accept-language");
  return inChromiumOrder && language > at("user-agent") && language < at("accept");
}

export function headerOrderFindings(overridden: boolean, weight: number): Finding[] {
  if (!overridden) return [];
  return [
    {
      id: "header_order_override",
      logOdds: weight,
      reason:
        "Accept-Language comes between User-Agent and Accept, where Chromium never writes it and the DevTools protocol puts it when automation overrides the language (a stealth setup, Playwright's locale option).",
    },
  ];
}

/** The reason codes of this signal's findings, with their category. */
const CODES = { header_order_override: "browser" } as const satisfies Record<string, ReasonCategory>;

export const headerOrderSignal: Signal<keyof typeof CODES> = {
  name: "header order",
  codes: CODES,
  contradictsBrowser: () => true,
  findings: ({ ua, headers, model: { weights: w } }) =>
    headerOrderFindings(languageOverridden(ua, headers), w.headerOrderOverride),
};
