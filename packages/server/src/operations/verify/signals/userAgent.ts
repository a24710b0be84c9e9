import { isbot } from "isbot";
import UAParser from "ua-parser-js";
import type { Finding } from "./findings.js";

export type BrowserFamily = "chromium" | "firefox" | "safari";

export interface UserAgentSignal {
  present: boolean;
  /** Matched by isbot's list of crawlers, HTTP libraries and headless browsers. */
  automation: boolean;
  /** The browser the user agent claims to be, when it claims one. */
  browser: { family: BrowserFamily; major: number } | undefined;
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

function browserOf(parser: UAParser): UserAgentSignal["browser"] {
  const { name, major } = parser.getBrowser();
  const version = Number.parseInt(major ?? "", 10);
  if (!name || !Number.isFinite(version)) return undefined;
  if (CHROMIUM.has(name)) return { family: "chromium", major: version };
  if (name === "Firefox") return { family: "firefox", major: version };
  if (name === "Safari" || name === "Mobile Safari") return { family: "safari", major: version };
  return undefined;
}

/**
 * Parsed user agents, least recently used dropped. Real traffic repeats a small set of user agents,
 * and parsing is most of the cost of reading a request's evidence.
 */
const CACHE_SIZE = 4096;
const cache = new Map<string, UserAgentSignal>();

export function readUserAgent(userAgent: string | undefined): UserAgentSignal {
  const ua = userAgent?.trim() ?? "";
  if (ua === "") return { present: false, automation: false, browser: undefined, os: undefined };
  let sig = cache.get(ua);
  if (sig) {
    cache.delete(ua);
  } else {
    const parser = new UAParser(ua);
    sig = Object.freeze({
      present: true,
      automation: isbot(ua),
      browser: browserOf(parser),
      os: parser.getOS().name,
    });
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  cache.set(ua, sig);
  return sig;
}

export function userAgentFindings(
  sig: UserAgentSignal,
  weights: { missing: number; automation: number },
): Finding[] {
  if (!sig.present) {
    return [
      { id: "ua_missing", logOdds: weights.missing, reason: "No user agent was sent with the attempt." },
    ];
  }
  if (sig.automation) {
    return [
      {
        id: "ua_automation",
        logOdds: weights.automation,
        reason: "The user agent belongs to an automation tool, HTTP library or headless browser.",
        automation: true,
      },
    ];
  }
  return [];
}
