import { isbotMatches } from "isbot";
import UAParser from "ua-parser-js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";

export type BrowserFamily = "chromium" | "firefox" | "safari";

/**
 * What the user agent claims the client is. Only `browser` (a family and version Warden knows) and
 * `app` (a native app naming itself and its platform first) are claims verify can hold the rest of the
 * request to; anything else (a browser token removed, truncated or garbled) claims nothing and weighs
 * as much as no user agent at all, so that editing it away can never lower the risk.
 */
export type UserAgentClaim = "missing" | "automation" | "browser" | "app" | "unrecognized";

export interface UserAgentSignal {
  present: boolean;
  /** Matched by isbot's list of crawlers, HTTP libraries and headless browsers. */
  automation: boolean;
  /** The browser the user agent claims to be, when it claims one. */
  browser: { family: BrowserFamily; major: number } | undefined;
  claim: UserAgentClaim;
  /** Operating system name as ua-parser-js reads it ("Windows", "Mac OS", "Android", …). */
  os: string | undefined;
}

const CHROMIUM = new Set([
  "Chrome",
  "Chromium",
  "Edge",
  "Opera",
  "Brave",
  "Vivaldi",
  "Samsung Browser",
  "Yandex",
]);

const majorOf = (version: string | undefined): number => Number.parseInt(version ?? "", 10);

/**
 * The browser a user agent claims: by its name where ua-parser-js knows it, else by its engine, so
 * that every browser built on one (Samsung Internet, in-app browsers and WebViews, forks) is held to
 * its engine's headers and TLS stack. WebKit counts as Apple's only where Apple ships it (iOS, where
 * every browser is WebKit, and macOS): "AppleWebKit/537.36 (KHTML, like Gecko)" alone is Chromium's
 * compatibility token with the browser's own token cut off, which claims nothing.
 */
function browserOf(parser: UAParser): UserAgentSignal["browser"] {
  const { name, major } = parser.getBrowser();
  const version = majorOf(major);
  if (name && Number.isFinite(version)) {
    if (CHROMIUM.has(name)) return { family: "chromium", major: version };
    if (name === "Firefox") return { family: "firefox", major: version };
    if (name === "Safari" || name === "Mobile Safari") return { family: "safari", major: version };
  }
  const engine = parser.getEngine();
  const engineMajor = majorOf(engine.version);
  if (!Number.isFinite(engineMajor)) return undefined;
  if (engine.name === "Blink") return { family: "chromium", major: engineMajor };
  if (engine.name === "Gecko") return { family: "firefox", major: engineMajor };
  const os = parser.getOS().name;
  if (engine.name === "WebKit" && (os === "iOS" || os === "Mac OS"))
    return { family: "safari", major: engineMajor };
  return undefined;
}

/**
 * A native app's HTTP client that names the app first and its mobile platform ("AcmeShop/5.2.1
 * (Linux; Android 14; Pixel 8) okhttp/4.12.0"): the platform's HTTP stack token that isbot's list
 * matches is how every app there talks HTTP, not a sign of a script. Only matches inside such a token
 * are forgiven; anything else isbot matches (a crawler's name, curl first) still counts. A script can
 * claim to be an app, as it can claim to be a browser; then it is simply not a browser.
 */
const APP_FIRST = /^(?!Mozilla\/)[A-Za-z][\w.-]*\/\d[\w.]*\s.*\b(?:iOS|iPhone|iPad|Android|Darwin)\b/;
const NATIVE_STACK =
  /\b(?:okhttp|Alamofire|AFNetworking|CFNetwork|Darwin|Dalvik|Cronet|ktor-client)\/[\w.]+/gi;
function automationUserAgent(ua: string): boolean {
  const matches = isbotMatches(ua);
  if (matches.length === 0) return false;
  if (!APP_FIRST.test(ua)) return true;
  const stack = [...ua.matchAll(NATIVE_STACK)].map((m) => [m.index, m.index + m[0].length] as const);
  return matches.some((m) => {
    const at = ua.indexOf(m);
    return !stack.some(([from, to]) => at >= from && at + m.length <= to);
  });
}

/** The longest user agent verify reads, wherever it comes from (subject.userAgent or headers). */
export const MAX_USER_AGENT = 2048;

/**
 * Parsed user agents, least recently used dropped. Real traffic repeats a small set of user agents,
 * and parsing is most of the cost of reading a request's evidence. Only user agents within
 * MAX_USER_AGENT are kept, so the cache holds at most CACHE_SIZE × 2,048 characters (about 16 MB)
 * whatever callers send.
 */
const CACHE_SIZE = 4096;
const cache = new Map<string, UserAgentSignal>();

/** How many parsed user agents the cache holds (tests). */
export const cachedUserAgents = (): number => cache.size;

export function readUserAgent(userAgent: string | undefined): UserAgentSignal {
  const ua = userAgent?.trim() ?? "";
  if (ua === "")
    return { present: false, automation: false, browser: undefined, claim: "missing", os: undefined };
  let sig = cache.get(ua);
  if (sig) {
    cache.delete(ua);
  } else {
    const parser = new UAParser(ua);
    const automation = automationUserAgent(ua);
    const browser = browserOf(parser);
    sig = Object.freeze({
      present: true,
      automation,
      browser,
      claim: automation
        ? "automation"
        : browser
          ? "browser"
          : // An app's HTTP client names no browser engine; one that does is a browser's text rearranged.
            APP_FIRST.test(ua) && parser.getEngine().name === undefined
            ? "app"
            : "unrecognized",
      os: parser.getOS().name,
    });
    if (ua.length > MAX_USER_AGENT) return sig;
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  cache.set(ua, sig);
  return sig;
}

export function userAgentFindings(
  sig: UserAgentSignal,
  weights: { missing: number; automation: number },
): Finding[] {
  if (sig.claim === "missing") {
    return [
      { id: "ua_missing", logOdds: weights.missing, reason: "No user agent was sent with the attempt." },
    ];
  }
  if (sig.claim === "unrecognized") {
    return [
      {
        id: "ua_unrecognized",
        logOdds: weights.missing,
        reason:
          "The user agent names no browser or app Warden recognises (a browser's token removed, cut short or garbled): it counts as no user agent.",
      },
    ];
  }
  if (sig.automation) {
    return [
      {
        id: "ua_automation",
        logOdds: weights.automation,
        reason: "The user agent belongs to an automation tool, HTTP library or headless browser.",
        automation: true,
        story: "program",
      },
    ];
  }
  return [];
}

/** The reason codes of this signal's findings, with their category. */
const CODES = {
  ua_missing: "browser",
  ua_unrecognized: "browser",
  ua_automation: "browser",
} as const satisfies Record<string, ReasonCategory>;

export const userAgentSignal: Signal<keyof typeof CODES> = {
  name: "user agent",
  codes: CODES,
  explainedByDeclaredAgent: true,
  findings: ({ ua, model: { weights: w } }) =>
    userAgentFindings(ua, { missing: w.uaMissing, automation: w.uaAutomation }),
};
