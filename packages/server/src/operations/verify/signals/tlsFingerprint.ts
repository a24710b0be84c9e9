import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";
import { BROWSER_CIPHER_HASHES, LIBRARY_FINGERPRINTS, type TlsStack } from "./tlsStacks.js";
import type { UserAgentSignal } from "./userAgent.js";

/**
 * The client's TLS fingerprint (subject.tls.ja4), as the edge that terminated its connection computed
 * it, against the browser its user agent claims. Headers are text a program copies from a browser;
 * the TLS handshake is made by the program's own TLS library, which a script does not change by
 * copying headers. So a Node, Python or Go client that sends a browser's headers still shakes hands
 * as Node, Python or Go.
 *
 * Only the edge can see the handshake: the value is as trustworthy as the integration that forwards
 * it (the SDK reads it only from a trusted proxy's header). An absent fingerprint is no evidence.
 */

/** JA4 (TLS client): `<a>_<b>_<c>`; part a is protocol, version, SNI, counts and ALPN. */
export const JA4_PATTERN =
  "^[tqd](?:1[0-3]|s[23]|d[1-3]|00)[di][0-9]{4}[0-9A-Za-z]{2}_[0-9a-f]{12}_[0-9a-f]{12}$";
const JA4 = new RegExp(JA4_PATTERN);

export interface Ja4 {
  text: string;
  /** t (TCP), q (QUIC) or d (DTLS). */
  transport: string;
  /** The highest TLS version offered: "13", "12", …. */
  version: string;
  /** First and last characters of the first ALPN value offered ("h2", "h1", "00" for none). */
  alpn: string;
  ciphers: string;
  extensions: string;
}

export function readJa4(value: string | undefined): Ja4 | undefined {
  if (value === undefined || !JA4.test(value)) return undefined;
  const [a = "", ciphers = "", extensions = ""] = value.split("_");
  return {
    text: value,
    transport: a.slice(0, 1),
    version: a.slice(1, 3),
    alpn: a.slice(8, 10).toLowerCase(),
    ciphers,
    extensions,
  };
}

export interface TlsWeights {
  /** The fingerprint of a known HTTP library under a browser's user agent. */
  library: number;
  /** A handshake no browser of the claimed family makes (no TLS 1.3, no HTTP/2 offered). */
  notBrowser: number;
  /** Another browser's TLS stack than the one the user agent claims (a user-agent switcher). */
  otherBrowser: number;
  /** Cipher suites Warden does not know for the claimed browser (TLS inspection, a new release). */
  unfamiliar: number;
}

/** The TLS stack a browser uses: every browser on iOS uses Apple's. */
function expectedStack(ua: UserAgentSignal): TlsStack | undefined {
  if (!ua.browser) return undefined;
  if (ua.os === "iOS" || ua.browser.family === "safari") return "apple";
  return ua.browser.family === "firefox" ? "nss" : "chromium";
}

function stackOf(ciphers: string): TlsStack | undefined {
  for (const [stack, hashes] of Object.entries(BROWSER_CIPHER_HASHES) as [TlsStack, readonly string[]][]) {
    if (hashes.includes(ciphers)) return stack;
  }
  return undefined;
}

const STACK_NAMES: Readonly<Record<TlsStack, string>> = {
  chromium: "Chromium's",
  nss: "Firefox's",
  apple: "Apple's",
};

/**
 * What the handshake says against what the user agent claims. A library's handshake is a program's
 * whatever the user agent says, and one without TLS 1.3 or HTTP/2 is no current browser's nor any
 * current mobile platform's, unless the user agent names the program it is: editing the user agent
 * (the client's own text) never takes either away. Only comparing two browser stacks needs the
 * claimed family.
 */
export function tlsFindings(ja4: Ja4 | undefined, ua: UserAgentSignal, w: TlsWeights): Finding[] {
  if (!ja4) return [];
  const library = LIBRARY_FINGERPRINTS.find((l) => l.ciphers === ja4.ciphers);
  if (library) {
    const who =
      ua.claim === "browser"
        ? "a program sent a browser's user agent"
        : ua.claim === "automation"
          ? "the program its user agent names"
          : "a program made the request";
    return [
      {
        id: "tls_library",
        logOdds: w.library,
        reason: `The connection's TLS handshake is ${library.name}'s, not a browser's: ${who}.`,
        automation: true,
        story: "program",
      },
    ];
  }
  // QUIC is HTTP/3, which only browsers (and a few clients Warden cannot tell apart) speak here.
  if (ja4.transport !== "t" || ua.claim === "automation") return [];
  const offeredBy =
    ua.claim === "browser"
      ? `every current ${ua.browser?.family} browser`
      : "every current browser and mobile platform's HTTP stack";
  if (ja4.version !== "13" || ja4.alpn !== "h2") {
    const missing = ja4.version !== "13" ? "TLS 1.3" : "HTTP/2";
    return [
      {
        id: "tls_not_browser",
        logOdds: w.notBrowser,
        reason: `The connection did not offer ${missing}, which ${offeredBy} offers: a program made the request.`,
        automation: true,
      },
    ];
  }
  const claimed = expectedStack(ua);
  if (!claimed) return [];
  const actual = stackOf(ja4.ciphers);
  if (actual === claimed) return [];
  if (actual) {
    return [
      {
        id: "tls_other_browser",
        logOdds: w.otherBrowser,
        reason: `The connection's TLS handshake is ${STACK_NAMES[actual]}, but the user agent claims a browser that uses ${STACK_NAMES[claimed]} (a disguised user agent).`,
        story: "disguise",
      },
    ];
  }
  return [
    {
      id: "tls_unfamiliar",
      logOdds: w.unfamiliar,
      reason: `The connection's cipher suites are not those ${STACK_NAMES[claimed]} TLS stack offers (TLS inspection on the way, a new browser release, or a program).`,
    },
  ];
}

/** The reason codes of this signal's findings, with their category. */
const CODES = {
  tls_library: "tls",
  tls_not_browser: "tls",
  tls_other_browser: "tls",
  tls_unfamiliar: "tls",
} as const satisfies Record<string, ReasonCategory>;

export const tlsSignal: Signal<keyof typeof CODES> = {
  name: "TLS fingerprint",
  codes: CODES,
  explainedByDeclaredAgent: true,
  // Unfamiliar cipher suites are not such evidence: people behind TLS inspection have them.
  contradictsBrowser: (f) => f.id !== "tls_unfamiliar",
  findings: ({ ja4, ua, model: { weights: w } }) => tlsFindings(ja4, ua, w.tls),
};
