import { generateKeyPairSync, type KeyObject } from "node:crypto";
import type { PageBehaviour as ServerPageBehaviour } from "@warden/server/dist/operations/verify/signals/pageEvidence.js";
import { signRequest } from "@warden/server/dist/webBotAuth/signRequest.js";
import type { JWK } from "jose";

/**
 * Labeled verify traffic for `npm run eval`: people on real browser profiles (and on iOS browsers,
 * privacy browsers, behind integrations that forward part of the headers, and in native apps),
 * verified agents, and eight kinds of abuse. Each attempt is built at send time (signatures carry the
 * current clock). The traffic is generated from a seed; nothing here reads Warden's rules or data sets.
 *
 * Page evidence (POST /v1/page-tokens, subject.page): the browser forms (signup, trial_activation,
 * demo_request) run `@warden/browser`'s watchPage, so an attempt that loads the page carries a
 * `PageVisit`: what the integrator's server sends for the token as the page loads, how long the form
 * stays open, and the counts the page reports. People fill the form as people do; headless browsers
 * run the page and fill it with their tool's defaults (Playwright/Puppeteer fill or type without delay,
 * click, submit within a second), a share of patched stealth ones typing with delays; programs that
 * send the form without a browser have no visit, except scripted_page_minting, which asks the
 * integrator's page route for a token, waits and fabricates a person's counts. Native apps have no
 * page and use their own actions (app_signup, app_trial_activation), which do not require one.
 *
 * TLS (subject.tls.ja4): the edge that terminates each connection computes the client's JA4, and the
 * integration forwards it with the verify, except where it does not: 30% of attempts carry no `tls`
 * (an edge without JA4, an integration without the SDK's ja4Header), drawn by attempt whatever the
 * class. What the edge sees is the client's own TLS stack (the values are those of the verify
 * signals' fixtures/tls-ja4.json, copied below as JA4; the nearest release the fixture lists for the
 * browser claimed):
 * - people: their browser's stack: Chromium's for Chrome, Edge, Brave and Android Chrome, Firefox's
 *   for Firefox, Tor Browser and LibreWolf, Apple's for Safari and every browser on iOS; 3% of people
 *   on a desktop browser are behind a TLS-inspecting proxy (corporate networks), which shakes hands
 *   for them with its own stack: TLS 1.3 and HTTP/2 offered, cipher suites and extensions no browser
 *   has (one of four proxies drawn from the seed). Native apps: Apple's stack on iOS, an okhttp-like
 *   Android stack (Conscrypt with the client's cipher list, HTTP/2) that is no browser's.
 * - headless browsers: Chromium's (they are Chromium); a user agent that names a program (curl,
 *   python-requests, Go, axios, node-fetch, Scrapy, HeadlessChrome, an agent's): that program's stack.
 * - programs that claim a browser (scripted_hosting's browser user agents, disposable_farm,
 *   multi_account, slow_attacker, scripted_page_minting): their HTTP library as it comes (75%: Node's
 *   undici fetch 30%, node:https 10%, got-scraping with the preset of the browser it claims 25%,
 *   Python 15%, Go 12%, curl 8%); the same library with its cipher suites and signature algorithms
 *   edited (15%: TLS version and ALPN as the library's, other counts and hashes); a TLS-impersonation
 *   library presenting the claimed browser's own fingerprint (10%; for page minting that tenth is its
 *   own class, scripted_tls_impersonation). A burst of multi_account is one program: one stack.
 * These shares are assumptions of the model, not measurements.
 */

export type TrafficClass =
  | "human"
  | "human_ios"
  | "human_privacy"
  | "human_partial_headers"
  | "native_app"
  | "verified_agent"
  | "forged_agent"
  | "scripted_hosting"
  | "disposable_farm"
  | "multi_account"
  | "slow_attacker"
  | "headless_ua_spoofed"
  | "headless_hints_spoofed"
  | "headless_stealth"
  | "headless_stealth_patched"
  | "scripted_page_minting"
  | "scripted_tls_impersonation";
export type Truth = "human" | "agent" | "abuse";

export const TRUTH: Record<TrafficClass, Truth> = {
  human: "human",
  human_ios: "human",
  human_privacy: "human",
  human_partial_headers: "human",
  native_app: "human",
  verified_agent: "agent",
  forged_agent: "abuse",
  scripted_hosting: "abuse",
  disposable_farm: "abuse",
  multi_account: "abuse",
  slow_attacker: "abuse",
  headless_ua_spoofed: "abuse",
  headless_hints_spoofed: "abuse",
  headless_stealth: "abuse",
  headless_stealth_patched: "abuse",
  scripted_page_minting: "abuse",
  scripted_tls_impersonation: "abuse",
};

/** Headless browsers posing as people: the classes of the ≥90%-not-allowed goal. */
export const HEADLESS: ReadonlySet<TrafficClass> = new Set([
  "headless_ua_spoofed",
  "headless_hints_spoofed",
  "headless_stealth",
  "headless_stealth_patched",
]);

/** Abuse run by programs: the classes the ≥95% challenged-or-denied goal is about. */
export const SCRIPTED: ReadonlySet<TrafficClass> = new Set([
  "forged_agent",
  "scripted_hosting",
  "slow_attacker",
]);

/** What `@warden/browser`'s watchPage counts between the page's load and the submit (every count sent). */
export type PageBehaviour = Required<ServerPageBehaviour>;

/** A form's page that ran: its token is asked for `fillMs` before the verify. */
export interface PageVisit {
  /** What the integrator's server sends POST /v1/page-tokens as the page loads (the SDK's ipTrunc). */
  subject: { ipTrunc: string; userAgent: string };
  /** From the page's load (the token's issue) to the verify, in milliseconds. */
  fillMs: number;
  /** The page's report, sent as subject.page.behaviour. */
  behaviour: PageBehaviour;
}

export interface Attempt {
  cls: TrafficClass;
  /** The page the attempt's form was sent from; absent when no page ran. */
  page?: PageVisit;
  /** The client's JA4 as the edge forwards it (subject.tls.ja4); absent when it is not forwarded. */
  tls?: string;
  body(nowSeconds: number): Record<string, unknown>;
}

export interface AgentOperator {
  operator: string;
  signatureAgent: string;
  userAgent: string;
  alg: "ed25519" | "rsa-pss-sha512";
  privateKey: KeyObject;
  publicJwk: JWK;
}

/** Mulberry32: small, fast, seedable. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Profile {
  ua: string;
  headers: Record<string, string>;
}
const FETCH = { "sec-fetch-site": "same-origin", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
/**
 * Sec-CH-UA as Chromium 155 and 156 send it: the order of the three brands and the GREASE brand are
 * Chromium's own picks for each major version (Debian's Chromium 156 was captured sending
 * `"Not:A-Brand";v="8", "Chromium";v="156"`).
 */
const SEC_CH_UA: Record<155 | 156, (brand: string) => string> = {
  155: (brand) => `"${brand}";v="155", "Chromium";v="155", "Not(A:Brand";v="24"`,
  156: (brand) => `"Not:A-Brand";v="8", "Chromium";v="156", "${brand}";v="156"`,
};
const chromeHints = (v: 155 | 156, platform: string, mobile: boolean, brand = "Google Chrome") => ({
  "sec-ch-ua": SEC_CH_UA[v](brand),
  "sec-ch-ua-mobile": mobile ? "?1" : "?0",
  "sec-ch-ua-platform": `"${platform}"`,
});
/**
 * A Chromium navigation's headers in the order Chromium sends them and @warden/client forwards them
 * (captured from Debian's Chromium 156: fixtures/chromium-header-order.json). With `languageOverride`
 * Accept-Language comes where the DevTools protocol's override writes it, right after User-Agent.
 */
function chromiumNavigation(
  ua: string,
  lang: string,
  hints: Record<string, string>,
  languageOverride = false,
): Record<string, string> {
  const language = { "accept-language": lang };
  return {
    ...hints,
    "upgrade-insecure-requests": "1",
    "user-agent": ua,
    ...(languageOverride ? language : {}),
    accept:
      "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "navigate",
    "sec-fetch-user": "?1",
    "sec-fetch-dest": "document",
    "accept-encoding": "gzip, deflate, br, zstd",
    ...(languageOverride ? {} : language),
  };
}
const LANGS = [
  "en-US,en;q=0.9",
  "en-GB,en;q=0.8",
  "de-DE,de;q=0.9,en;q=0.7",
  "fr-FR,fr;q=0.9",
  "es-ES,es;q=0.9",
];

const WINDOWS_CHROME_156 =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const MAC_CHROME_155 =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/155.0.0.0 Safari/537.36";
const ANDROID_CHROME_156 =
  "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36";
const WINDOWS_EDGE_156 =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 Edg/156.0.0.0";

export function browserProfiles(lang: string): Profile[] {
  const base = { "accept-language": lang, ...FETCH };
  return [
    {
      ua: WINDOWS_CHROME_156,
      headers: chromiumNavigation(WINDOWS_CHROME_156, lang, chromeHints(156, "Windows", false)),
    },
    {
      ua: MAC_CHROME_155,
      headers: chromiumNavigation(MAC_CHROME_155, lang, chromeHints(155, "macOS", false)),
    },
    {
      ua: ANDROID_CHROME_156,
      headers: chromiumNavigation(ANDROID_CHROME_156, lang, chromeHints(156, "Android", true)),
    },
    {
      ua: WINDOWS_EDGE_156,
      headers: chromiumNavigation(
        WINDOWS_EDGE_156,
        lang,
        chromeHints(156, "Windows", false, "Microsoft Edge"),
      ),
    },
    {
      ua: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
      headers: { ...base },
    },
    {
      ua: "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
      headers: { ...base },
    },
    {
      ua: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
      headers: { ...base },
    },
    {
      ua: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
      headers: { ...base },
    },
  ];
}

/** Consumer ISP prefixes (Comcast, BT, Deutsche Telekom, Orange, Verizon; Sky and DTAG over IPv6). */
const RESIDENTIAL_V4 = ["73", "86.13", "79.20", "90.1", "174.20", "24.5"];
const RESIDENTIAL_V6 = ["2a02:c7f", "2003:e1"];
/** Cloud and hosting prefixes (DigitalOcean, Hetzner, OVH, Google Cloud, Vultr, AWS). */
const HOSTING_V4 = ["104.131", "5.9", "51.68", "34.70", "45.32", "18.200", "159.65", "95.216"];

const FIRST = [
  "anna",
  "ben",
  "carla",
  "david",
  "emma",
  "felix",
  "grace",
  "hugo",
  "ines",
  "jonas",
  "kate",
  "liam",
];
const LAST = [
  "miller",
  "schmidt",
  "dubois",
  "garcia",
  "rossi",
  "novak",
  "kowalski",
  "smith",
  "jensen",
  "silva",
];
export const FREE = ["gmail.com", "outlook.com", "yahoo.com", "hotmail.com", "gmx.de", "icloud.com"];
const BUSINESS = ["acme-industries.com", "globex.io", "initech.co.uk", "umbrella-labs.de", "hooli.example"];
const DISPOSABLE = [
  "mailinator.com",
  "guerrillamail.com",
  "yopmail.com",
  "10minutemail.com",
  "trashmail.com",
];
const SCRIPTS = [
  "curl/8.5.0",
  "python-requests/2.32.3",
  "Go-http-client/2.0",
  "axios/1.7.7",
  "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
  "Scrapy/2.11.2 (+https://scrapy.org)",
];
const ACTIONS = ["signup", "trial_activation", "demo_request", "api_key"];

export function makeOperators(): AgentOperator[] {
  const ed = generateKeyPairSync("ed25519");
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return [
    {
      operator: "Acme Agents",
      signatureAgent: "https://agents.acme.example",
      userAgent: "AcmeAgent/2.1 (+https://agents.acme.example/bot)",
      alg: "ed25519",
      privateKey: ed.privateKey,
      publicJwk: ed.publicKey.export({ format: "jwk" }) as JWK,
    },
    {
      operator: "Globex Crawler",
      signatureAgent: "https://crawler.globex.example",
      userAgent: "GlobexBot/1.4 (+https://crawler.globex.example)",
      alg: "rsa-pss-sha512",
      privateKey: rsa.privateKey,
      publicJwk: rsa.publicKey.export({ format: "jwk" }) as JWK,
    },
  ];
}

export interface GeneratorOptions {
  seed: number;
  /** Roughly how many attempts to make. */
  size: number;
  operators: readonly AgentOperator[];
  /** keyid (JWK thumbprint) of each operator, same order. */
  keyids: readonly string[];
}

/** Class mix of the generated traffic (shares of `size`); bursts count each attempt. */
const MIX: Record<TrafficClass, number> = {
  human: 0.4,
  human_ios: 0.04,
  human_privacy: 0.04,
  human_partial_headers: 0.04,
  native_app: 0.03,
  verified_agent: 0.08,
  forged_agent: 0.06,
  scripted_hosting: 0.07,
  disposable_farm: 0.05,
  multi_account: 0.08,
  slow_attacker: 0.05,
  headless_ua_spoofed: 0.02,
  headless_hints_spoofed: 0.02,
  headless_stealth: 0.02,
  headless_stealth_patched: 0.02,
  // Page-minting scripts, a tenth of them (the impersonation share below) with a browser's TLS.
  scripted_page_minting: 0.018,
  scripted_tls_impersonation: 0.002,
};

/** Share of attempts whose integration forwards no JA4 (subject.tls absent), whatever the class. */
const NO_TLS = 0.3;
/** Share of people on a desktop browser behind a TLS-inspecting proxy. */
const TLS_INSPECTED = 0.03;
/** Of programs that claim a browser: TLS-impersonation library, and library with edited ciphers. */
const IMPERSONATING = 0.1;
const TWEAKED = 0.15;

/**
 * JA4 fingerprints from the verify signals' fixtures/tls-ja4.json ("measured" on Node 20.20 and
 * Debian 12, or "published" by JA4 references); evaluation.test.ts checks each is the fixture's.
 */
export const JA4 = Object.freeze({
  /** chromium 156 (Debian, headless), measured: desktop Chromium 155–156 and the headless ones. */
  chromium156: "t13d1517h2_8daaf6152771_cb7bf5808d99",
  /** chrome 133 (Android), published: the fixture's Android Chromium. */
  chromiumAndroid: "t13d1516h2_8daaf6152771_d8a2da3f94cd",
  /** chrome 120, published (TLS-impersonation libraries' Chrome targets lag the releases). */
  chromium120: "t13d1516h2_8daaf6152771_02713d6af862",
  /** firefox 135, published: Firefox 128–135 (Tor Browser 128 ESR, Firefox 132–133, LibreWolf). */
  firefox135: "t13d1717h2_5b57614c22b0_3cbfd9057e0d",
  firefox120: "t13d1715h2_5b57614c22b0_5c2c66f702b0",
  safariMac: "t13d2013h2_a09f3c656075_7f0f34a4126d",
  /** safari ios 18, published: every browser and WebView on iOS and iPadOS, and URLSession apps. */
  safariIos: "t13d2014h2_a09f3c656075_e42f34c56612",
  undiciFetch: "t13d5911h1_a33745022dd6_1f22a2ca17c4",
  nodeHttps: "t13d591000_a33745022dd6_1f22a2ca17c4",
  gotChrome: "t13d1612h2_1711a4c0508c_7bd705b301e6",
  gotFirefox: "t13d1812h2_796efca44d18_deba0f59a979",
  gotSafari: "t13d2412h2_df98b6d6dfe4_7bd705b301e6",
  curl: "t13d3112h2_e8f1e7e78f70_b26ce05bbdd6",
  python: "t13d181100_85036bcba153_d41ae481755e",
  go: "t13d190900_9dc949149365_97f8aa674fd9",
});

/** The /24 or /48 network of an address, as the SDK sends it (ipTrunc). */
export function truncate(ip: string): string {
  if (ip.includes(":")) {
    const [a, b, c] = ip.split(":");
    return `${a}:${b}:${c}::/48`;
  }
  const [a, b, c] = ip.split(".");
  return `${a}.${b}.${c}.0/24`;
}

/** The draws the generator makes, on one random source. */
export function draws(rnd: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const int = (n: number) => Math.floor(rnd() * n);
  const token = (n: number) =>
    Array.from({ length: n }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[int(36)]).join("");
  const v4 = (prefix: string) => {
    const parts = prefix.split(".");
    while (parts.length < 4) parts.push(String(parts.length === 3 ? 1 + int(250) : int(256)));
    return parts.join(".");
  };
  const v6 = (prefix: string) =>
    `${prefix}:${int(65536).toString(16)}:${int(65536).toString(16)}::${int(65536).toString(16)}`;
  const residential = () => (rnd() < 0.15 ? v6(pick(RESIDENTIAL_V6)) : v4(pick(RESIDENTIAL_V4)));
  const session = () => `s_${token(20)}`;
  const name = () =>
    `${pick(FIRST)}${pick([".", "", "_"])}${pick(LAST)}${rnd() < 0.3 ? String(1960 + int(45)) : ""}`;
  /** Uniform in [lo, hi). */
  const between = (lo: number, hi: number) => lo + rnd() * (hi - lo);
  /** Log-uniform in [lo, hi): counts that span orders of magnitude. */
  const spread = (lo: number, hi: number) => Math.round(Math.exp(between(Math.log(lo), Math.log(hi))));
  /** Standard normal (Box–Muller). */
  const normal = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  return { rnd, pick, int, token, v4, v6, residential, session, name, between, spread, normal };
}
export type Draws = ReturnType<typeof draws>;

const hex12 = (d: Draws) => Array.from({ length: 12 }, () => "0123456789abcdef"[d.int(16)]).join("");
const pad2 = (n: number) => String(n).padStart(2, "0");

/** A fingerprint no table lists: TLS 1.3 over TCP to a domain name, `alpn` first, its hashes drawn. */
function unlistedJa4(d: Draws, ciphers: number, extensions: number, alpn: "h2" | "h1" | "00"): string {
  return `t13d${pad2(ciphers)}${pad2(extensions)}${alpn}_${hex12(d)}_${hex12(d)}`;
}

/** The fixture's fingerprint of the release nearest `major` (ties to the newer). */
function nearest(releases: readonly (readonly [number, string])[], major: number): string {
  let best = releases[0] as readonly [number, string];
  for (const r of releases) if (Math.abs(r[0] - major) <= Math.abs(best[0] - major)) best = r;
  return best[1];
}
const major = (ua: string, token: RegExp) => Number(ua.match(token)?.[1] ?? 0);
const IOS_UA = /iPhone|iPad|CriOS|FxiOS|EdgiOS/;

/**
 * The TLS stack of the browser `ua` names, as that browser makes it: every browser on iOS uses Apple's
 * (an iPad that names itself a Mac is `ios`), Chrome, Edge and Brave Chromium's, Firefox and its
 * forks Firefox's NSS, Safari Apple's.
 */
export function browserJa4(ua: string, ios = false): string {
  if (ios || IOS_UA.test(ua)) return JA4.safariIos;
  if (/Firefox\//.test(ua))
    return nearest(
      [
        [120, JA4.firefox120],
        [135, JA4.firefox135],
      ],
      major(ua, /Firefox\/(\d+)/),
    );
  if (/Chrome\//.test(ua))
    return /Android/.test(ua)
      ? JA4.chromiumAndroid
      : nearest(
          [
            [120, JA4.chromium120],
            [156, JA4.chromium156],
          ],
          major(ua, /Chrome\/(\d+)/),
        );
  return JA4.safariMac;
}

/**
 * A TLS-impersonation library (curl-impersonate, curl_cffi, tls-client and the like) set to the browser
 * the program claims: that browser's fingerprint, from the library's targets (which lag the releases).
 */
function impersonatedJa4(d: Draws, ua: string): string {
  if (IOS_UA.test(ua) || /Android/.test(ua)) return browserJa4(ua);
  if (/Firefox\//.test(ua)) return d.pick([JA4.firefox120, JA4.firefox135]);
  if (/Chrome\//.test(ua)) return d.pick([JA4.chromium120, JA4.chromium156]);
  return JA4.safariMac;
}

/**
 * The HTTP library a program that claims a browser is written with, as it comes: Node's undici fetch
 * 30%, node:https (axios, got) 10%, got-scraping 25% (its preset for the browser claimed, whose
 * headers it generates), Python 15%, Go 12%, curl 8%.
 */
function libraryJa4(d: Draws, ua: string): string {
  const r = d.rnd();
  if (r < 0.3) return JA4.undiciFetch;
  if (r < 0.4) return JA4.nodeHttps;
  if (r < 0.65) {
    if (/Firefox\//.test(ua)) return JA4.gotFirefox;
    return /Chrome\//.test(ua) ? JA4.gotChrome : JA4.gotSafari;
  }
  if (r < 0.8) return JA4.python;
  if (r < 0.92) return JA4.go;
  return JA4.curl;
}

/**
 * The library with its cipher suites and signature algorithms edited (a browser's list pasted into its
 * options): its TLS version and ALPN stay the library's, its counts and hashes are no table's.
 */
function tweakedJa4(d: Draws, library: string): string {
  const extensions = Number(library.slice(6, 8)) - 1 + d.int(3);
  return unlistedJa4(d, 12 + d.int(9), extensions, library.slice(8, 10) as "h2" | "h1" | "00");
}

/**
 * A program that claims the browser `ua`: a TLS-impersonation library (IMPERSONATING), its library
 * edited (TWEAKED), or its library as it comes. With `impersonates` false the draw is among the
 * others, in the same proportions (the impersonating share is then a class of its own).
 */
function programJa4(d: Draws, ua: string, impersonates = true): string {
  const r = impersonates ? d.rnd() : IMPERSONATING + d.rnd() * (1 - IMPERSONATING);
  if (r < IMPERSONATING) return impersonatedJa4(d, ua);
  const library = libraryJa4(d, ua);
  return r < IMPERSONATING + TWEAKED ? tweakedJa4(d, library) : library;
}

/** What a person enters in a form: the address and the other fields' lengths (password, name, message). */
export interface FormFill {
  email: string;
  others: readonly number[];
  /** The median time a person keeps this form open, in seconds. */
  medianSeconds: number;
}

/**
 * A person at the form's page. Fill times are log-normal around the form's median (σ 0.6; the
 * quickest take 2.5 s), 1% leave the tab open and come back 20 minutes to 20 hours later. Keys are the
 * characters typed, plus corrections (a wrong key and a backspace), Shift and Tab; 10% paste the
 * address; 15% let the browser autofill (40% of them every field) and 10% a password
 * manager's extension, whose filling dispatches events of its own (untrusted). On a desktop, the
 * pointer moves dozens to hundreds of times with 1–3 presses, and 4% are keyboard-only (no press,
 * Enter submits); on a touch screen, taps and no pointer, a third of the typists inserting suggested
 * or swiped words without a key press each, and 3% move to another network between load and submit
 * (Wi-Fi to mobile data).
 */
export function personVisit(d: Draws, ip: string, ua: string, touch: boolean, form: FormFill): PageVisit {
  const fields = 1 + form.others.length;
  const mode = d.rnd();
  const autofill = mode < 0.15;
  const manager = mode >= 0.15 && mode < 0.25;
  const pastedEmail = d.rnd() < 0.1;
  let typedChars = 0;
  let typedFields = 0;
  let pasted = 0;
  let autofilled = 0;
  let untrusted = 0;
  const everything = autofill && d.rnd() < 0.4;
  if (autofill) {
    // The browser fills the address (and the name), or every field, from what it stored.
    autofilled = everything ? fields : 1 + d.int(Math.min(2, fields));
  } else if (manager) {
    // An extension sets the address and the password and dispatches input and change events.
    untrusted = 2 + d.int(5);
  }
  const filledBy = everything ? fields : autofill ? autofilled : manager ? Math.min(2, fields) : 0;
  const lengths = [form.email.length, ...form.others];
  lengths.forEach((len, i) => {
    if (i < filledBy) return;
    if (i === 0 && pastedEmail) {
      pasted++;
      return;
    }
    typedChars += len;
    typedFields++;
  });
  const keyboardOnly = !touch && d.rnd() < 0.04;
  const corrections = Math.round(typedChars * d.between(0, 0.08));
  const shifts = typedFields > 0 ? d.int(2 * typedFields + 1) : 0;
  const tabs = keyboardOnly || (!touch && d.rnd() < 0.5) ? fields - 1 : 0;
  const keys = typedChars + 2 * corrections + shifts + tabs + (keyboardOnly ? 1 : 0);
  const inserted = touch && typedChars > 0 && d.rnd() < 0.3 ? 1 + d.int(8) : 0;
  const pointerMoves = touch ? 0 : keyboardOnly ? d.int(6) : d.spread(25, 400);
  const clicks = touch || keyboardOnly ? 0 : 1 + d.int(3);
  const touches = touch ? fields + 1 + d.int(5) : 0;
  const leftOpen = d.rnd() < 0.01;
  // Nothing to type (all filled in for them): a glance and a press.
  const median = typedChars === 0 ? 6 : form.medianSeconds;
  const fillMs = leftOpen
    ? d.spread(20 * 60_000, 20 * 3_600_000)
    : Math.max(2_500, Math.round(median * 1000 * Math.exp(0.6 * d.normal())));
  const moved = touch && d.rnd() < 0.03;
  return {
    subject: { ipTrunc: truncate(moved ? d.residential() : ip), userAgent: ua },
    fillMs,
    behaviour: {
      elapsedMs: fillMs + d.int(300),
      keys,
      inserted,
      pasted,
      autofilled,
      pointerMoves,
      clicks,
      touches,
      untrusted,
    },
  };
}

/** A touch-screen browser (phones; an iPad names itself a Mac and is passed as touch by its class). */
const TOUCH_UA = /iPhone|iPad|Android|Mobile/;
/** The other fields of a form: a password for signup and trial activation; name, company and message for a demo. */
export function otherFields(d: Draws, action: string, form?: Record<string, string>): number[] {
  if (form) return Object.values(form).map((v) => v.length);
  return action === "demo_request" ? [] : [10 + d.int(7)];
}

export function generateTraffic(o: GeneratorOptions): Attempt[] {
  const rnd = prng(o.seed);
  const { pick, int, token, v4, residential, session, name } = draws(rnd);
  // Pages draw from a stream of their own: for a seed, every attempt is the one it was before page
  // evidence was modelled (same people, addresses, profiles), now with its page.
  const pg = draws(prng(o.seed ^ 0x5bd1e995));
  // TLS draws from a stream of its own too: the attempts are the ones they were before TLS was modelled.
  const tl = draws(prng(o.seed ^ 0x2c1b3c6d));
  // What the seed's world has: four TLS-inspecting proxies, the Android apps' HTTP stack (okhttp over
  // Conscrypt, its own cipher list) and Scrapy's (Twisted over pyOpenSSL), none of them measured here.
  const proxies = Array.from({ length: 4 }, () => unlistedJa4(tl, 12 + tl.int(34), 9 + tl.int(8), "h2"));
  const androidApp = unlistedJa4(tl, 12 + tl.int(6), 10 + tl.int(5), "h2");
  const scrapy = unlistedJa4(tl, 20 + tl.int(40), 8 + tl.int(5), "00");

  const out: { at: number; attempt: Attempt }[] = [];
  /** An attempt whose client shook hands with `ja4`; the integration forwards it or not (NO_TLS). */
  const add = (cls: TrafficClass, ja4: string, body: Attempt["body"], at = rnd(), page?: PageVisit) => {
    const tls = tl.rnd() < NO_TLS ? undefined : ja4;
    out.push({ at, attempt: { cls, body, ...(page ? { page } : {}), ...(tls ? { tls } : {}) } });
  };
  const count = (cls: TrafficClass) => Math.max(1, Math.round(o.size * MIX[cls]));
  /** A person's stack: their browser's, a TLS-inspecting proxy's (desktops), or their app's platform's. */
  const personJa4 = (cls: TrafficClass, ua: string): string => {
    if (cls === "native_app") return /iOS|Darwin|CFNetwork/.test(ua) ? JA4.safariIos : androidApp;
    const desktop = cls !== "human_ios" && !TOUCH_UA.test(ua);
    if (desktop && tl.rnd() < TLS_INSPECTED) return tl.pick(proxies);
    return browserJa4(ua, cls === "human_ios");
  };
  /** The stack of a program whose user agent names it. */
  const namedJa4 = (ua: string): string => {
    if (ua.startsWith("curl/")) return JA4.curl;
    if (ua.startsWith("python-")) return JA4.python;
    if (ua.startsWith("Go-http-client")) return JA4.go;
    if (ua.startsWith("Scrapy")) return scrapy;
    if (ua.includes("HeadlessChrome")) return browserJa4(ua.replace("HeadlessChrome", "Chrome"));
    return JA4.nodeHttps;
  };

  for (let i = 0; i < count("human"); i++) {
    const p = pick(browserProfiles(pick(LANGS)));
    const vpn = rnd() < 0.05;
    const business = rnd() < 0.35;
    const local = name();
    const email = `${local}${rnd() < 0.1 ? `+${pick(["news", "work", "saas"])}` : ""}@${business ? pick(BUSINESS) : pick(FREE)}`;
    const ip = vpn ? v4(pick(HOSTING_V4)) : residential();
    const action = pick(["signup", "signup", "trial_activation", "demo_request"]);
    const form =
      action === "demo_request"
        ? {
            name: local,
            company: pick(BUSINESS),
            message: `${pick(["Hi,", "Hello,", ""])} we are ${pick(["evaluating", "comparing", "looking at"])} tools for our ${pick(["support", "data", "sales", "platform"])} team of ${5 + int(200)} people${pick(["", " and would like a demo next week", ", can we talk pricing?"])}.`,
          }
        : undefined;
    const page = personVisit(pg, ip, p.ua, TOUCH_UA.test(p.ua), {
      email,
      others: otherFields(pg, action, form),
      medianSeconds: action === "demo_request" ? 45 : 12,
    });
    add(
      "human",
      personJa4("human", p.ua),
      () => ({
        action,
        session: session(),
        subject: { email, ip, userAgent: p.ua, headers: p.headers, ...(form ? { formData: form } : {}) },
      }),
      undefined,
      page,
    );
  }

  /**
   * A person's signup from `p`, on a residential network, with a free-mail or business address, on the
   * form's page; in a native app, through the app's own actions, with no page.
   */
  const person = (cls: TrafficClass, p: Profile) => {
    const local = name();
    const email = `${local}@${rnd() < 0.35 ? pick(BUSINESS) : pick(FREE)}`;
    const ip = residential();
    const form = pick(["signup", "signup", "trial_activation"]);
    const app = cls === "native_app";
    const action = app ? `app_${form}` : form;
    const page = app
      ? undefined
      : personVisit(pg, ip, p.ua, cls === "human_ios" || TOUCH_UA.test(p.ua), {
          email,
          others: otherFields(pg, form),
          medianSeconds: 12,
        });
    add(
      cls,
      personJa4(cls, p.ua),
      () => ({
        action,
        session: session(),
        subject: { email, ip, userAgent: p.ua, headers: p.headers },
      }),
      undefined,
      page,
    );
  };
  for (let i = 0; i < count("human_ios"); i++) person("human_ios", pick(iosProfiles(pick(LANGS))));
  for (let i = 0; i < count("human_privacy"); i++)
    person("human_privacy", pick(privacyProfiles(pick(LANGS))));
  for (let i = 0; i < count("human_partial_headers"); i++)
    person("human_partial_headers", pick(partialProfiles(pick(LANGS))));
  for (let i = 0; i < count("native_app"); i++) person("native_app", pick(nativeAppProfiles(pick(LANGS))));

  const agentHeaders = (op: AgentOperator, keyid: string, now: number, legacy: boolean, mode: string) => {
    const agent = legacy ? `"${op.signatureAgent}"` : `agent1="${op.signatureAgent}"`;
    const headers: Record<string, string> = {
      host: "app.example",
      "signature-agent": agent,
      "user-agent": op.userAgent,
    };
    const created = mode === "stale" ? now - 7200 : now - int(20);
    const signer = mode === "wrong_key" ? generateKeyPairSync("ed25519").privateKey : op.privateKey;
    const signed = signRequest(headers, signer, {
      components: ["@authority", legacy ? "signature-agent" : ["signature-agent", { key: "agent1" }]],
      keyid,
      alg: mode === "wrong_key" ? "ed25519" : op.alg,
      created,
      expires: created + 3600,
      nonce: Buffer.from(token(32)).toString("base64"),
      includeAlg: mode !== "wrong_key",
    });
    const out: Record<string, string> = {
      ...headers,
      signature: signed.signature,
      "signature-input": signed.signatureInput,
    };
    if (mode === "flipped")
      out.signature = signed.signature.replace(/:(.)/, (_m, c: string) => `:${c === "A" ? "B" : "A"}`);
    if (mode === "agent_swapped")
      out["signature-agent"] = legacy ? '"https://evil.example"' : 'agent1="https://evil.example"';
    return out;
  };

  for (let i = 0; i < count("verified_agent"); i++) {
    const k = int(o.operators.length);
    const op = o.operators[k] as AgentOperator;
    const legacy = rnd() < 0.3;
    const ip = v4(pick(HOSTING_V4));
    const action = pick(["api_key", "signup", "api_key"]);
    // The operators' crawlers: Go's and Python's stacks.
    add("verified_agent", k % 2 === 0 ? JA4.go : JA4.python, (now) => ({
      action,
      session: session(),
      subject: {
        ipTrunc: ip,
        userAgent: op.userAgent,
        headers: agentHeaders(op, o.keyids[k] as string, now, legacy, "valid"),
      },
    }));
  }

  for (let i = 0; i < count("forged_agent"); i++) {
    const k = int(o.operators.length);
    const op = o.operators[k] as AgentOperator;
    const mode = pick(["flipped", "stale", "agent_swapped", "wrong_key"]);
    const ip = v4(pick(HOSTING_V4));
    const ja4 = tl.pick([JA4.undiciFetch, JA4.nodeHttps, JA4.python, JA4.go, JA4.curl]);
    add("forged_agent", ja4, (now) => ({
      action: pick(ACTIONS),
      session: session(),
      subject: {
        ipTrunc: ip,
        userAgent: op.userAgent,
        headers: agentHeaders(op, o.keyids[k] as string, now, rnd() < 0.3, mode),
      },
    }));
  }

  for (let i = 0; i < count("scripted_hosting"); i++) {
    const fakeBrowser = rnd() < 0.3;
    const ua = fakeBrowser ? (browserProfiles("en-US")[0] as Profile).ua : pick(SCRIPTS);
    const ip = v4(pick(HOSTING_V4));
    const email = rnd() < 0.5 ? `${name()}${int(1000)}@${pick(FREE)}` : undefined;
    add("scripted_hosting", fakeBrowser ? programJa4(tl, ua) : namedJa4(ua), () => ({
      action: pick(ACTIONS),
      subject: {
        ip,
        userAgent: ua,
        headers: { accept: "*/*", "accept-encoding": "gzip, deflate" },
        ...(email ? { email } : {}),
      },
    }));
  }

  // Farms and multi-account bursts are run by scripts that replay a browser's headers: they never run
  // the form's page (no page token), like every program below except scripted_page_minting.
  for (let i = 0; i < count("disposable_farm"); i++) {
    const p = pick(browserProfiles("en-US"));
    const local = rnd() < 0.6 ? token(10) : name();
    const email = `${local}@${pick(DISPOSABLE)}`;
    const ip = residential();
    add("disposable_farm", programJa4(tl, p.ua), () => ({
      action: pick(["signup", "trial_activation"]),
      session: session(),
      subject: { email, ip, userAgent: p.ua, headers: p.headers },
    }));
  }

  // Bursts: one operator, one network, one Gmail mailbox in plus and dot variants, minutes apart.
  let left = count("multi_account");
  while (left > 0) {
    const burst = Math.min(left, 5 + int(6));
    left -= burst;
    const p = pick(browserProfiles("en-US"));
    const ip = v4(pick(RESIDENTIAL_V4));
    const local = `${pick(FIRST)}${pick(LAST)}${100 + int(900)}`;
    const start = rnd();
    const ja4 = programJa4(tl, p.ua);
    for (let j = 0; j < burst; j++) {
      const dotted = local
        .split("")
        .join(j % 2 ? "." : "")
        .replace(/\.\./g, ".");
      const email = `${j % 3 === 0 ? local : dotted}${j > 0 ? `+t${j}` : ""}@gmail.com`;
      add(
        "multi_account",
        ja4,
        () => ({
          action: "trial_activation",
          session: session(),
          subject: { email, ip, userAgent: p.ua, headers: p.headers },
        }),
        start + j * 1e-6,
      );
    }
  }

  // Careful scripts: a fresh network and address each time (under every velocity limit), a stealth
  // browser's user agent whose client hints still tell the server's platform or version.
  for (let i = 0; i < count("slow_attacker"); i++) {
    const p = browserProfiles(pick(LANGS))[0] as Profile;
    const headers =
      rnd() < 0.5
        ? { ...p.headers, "sec-ch-ua-platform": '"Linux"' }
        : { ...p.headers, "sec-ch-ua": '"HeadlessChrome";v="129", "Chromium";v="129", "Not_A Brand";v="24"' };
    const ip = v4(pick(HOSTING_V4));
    const email = `${name()}${int(100)}@${pick(FREE)}`;
    add("slow_attacker", programJa4(tl, p.ua), () => ({
      action: pick(["signup", "trial_activation"]),
      session: session(),
      subject: { email, ip, userAgent: p.ua, headers },
    }));
  }

  // Headless browsers from residential proxies, as the tools make them: the user agent replaced only
  // (Chromium still names itself HeadlessChrome in Sec-CH-UA); the user agent and its client hints
  // replaced through the automation protocol without a language (navigator.webdriver still true; the
  // headers in Chromium's own order); puppeteer-extra-plugin-stealth 2.11 as published (captured
  // driving Debian's Chromium 156: the retired GREASE brand in the hints it writes; Accept-Language
  // where the DevTools protocol's override puts it, its default "en-US,en"; its page and the page's
  // worker read a different platform, processor count and WebGL renderer); and the same plugin with
  // Chromium's real GREASE brand put back by its operator (the header order and the worker's processor
  // count and renderer still differ). Half of the integrations forward the page's signals
  // (@warden/browser).
  const STEALTH_SEC_CH_UA = '" Not A;Brand";v="99", "Chromium";v="156", "Google Chrome";v="156"';
  const STEALTH_LANGUAGE = "en-US,en;q=0.9";
  const pageSignals: Record<string, Record<string, unknown>> = {
    headless_ua_spoofed: { webdriver: true },
    headless_hints_spoofed: { webdriver: true },
    headless_stealth: { webdriver: false, mismatch: ["platform", "hardwareConcurrency", "webgl"] },
    headless_stealth_patched: { webdriver: false, mismatch: ["hardwareConcurrency", "webgl"] },
  };
  const headless = (cls: TrafficClass) => {
    const p = browserProfiles(pick(LANGS))[0] as Profile;
    const hints = chromeHints(156, "Windows", false);
    const headers =
      cls === "headless_ua_spoofed"
        ? {
            ...p.headers,
            "sec-ch-ua": '"Chromium";v="156", "HeadlessChrome";v="156", "Not:A-Brand";v="8"',
          }
        : cls === "headless_stealth"
          ? chromiumNavigation(p.ua, STEALTH_LANGUAGE, { ...hints, "sec-ch-ua": STEALTH_SEC_CH_UA }, true)
          : cls === "headless_stealth_patched"
            ? chromiumNavigation(p.ua, STEALTH_LANGUAGE, hints, true)
            : p.headers;
    const signals = rnd() < 0.5 ? { browserSignals: pageSignals[cls] } : {};
    const email = `${name()}${int(100)}@${pick(FREE)}`;
    const ip = residential();
    add(
      cls,
      JA4.chromium156,
      () => ({
        action: pick(["signup", "trial_activation"]),
        session: session(),
        subject: { email, ip, userAgent: p.ua, headers, ...signals },
      }),
      undefined,
      headlessVisit(pg, cls, ip, p.ua, email),
    );
  };
  for (const cls of HEADLESS) for (let i = 0; i < count(cls); i++) headless(cls);

  // A script that tries hard: it asks the integrator's page route for a token (from the network and
  // with the user agent it will submit with), replays a Chromium's navigation headers, waits 2–8 s and
  // fabricates a person's counts. It runs no page, so no browser signals. scripted_tls_impersonation
  // is the same script over a TLS-impersonation library (the Chromium it claims, its handshake too).
  const minting = count("scripted_page_minting");
  for (let i = 0; i < minting + count("scripted_tls_impersonation"); i++) {
    const cls: TrafficClass = i < minting ? "scripted_page_minting" : "scripted_tls_impersonation";
    const lang = pg.pick(LANGS);
    const p = browserProfiles(lang)[pg.pick([0, 1, 3])] as Profile;
    const ip = pg.rnd() < 0.7 ? pg.residential() : pg.v4(pg.pick(HOSTING_V4));
    const email = `${pg.name()}${pg.int(1000)}@${pg.pick(FREE)}`;
    const action = pg.pick(["signup", "signup", "trial_activation"]);
    const fillMs = Math.round(pg.between(2_000, 8_000));
    const page: PageVisit = {
      subject: { ipTrunc: truncate(ip), userAgent: p.ua },
      fillMs,
      behaviour: {
        elapsedMs: fillMs + pg.int(300),
        keys: email.length + 12 + pg.int(10),
        inserted: 0,
        pasted: 0,
        autofilled: 0,
        pointerMoves: pg.spread(25, 400),
        clicks: 1 + pg.int(3),
        touches: 0,
        untrusted: 0,
      },
    };
    add(
      cls,
      cls === "scripted_page_minting" ? programJa4(tl, p.ua, false) : impersonatedJa4(tl, p.ua),
      () => ({
        action,
        session: pg.session(),
        subject: { email, ip, userAgent: p.ua, headers: p.headers },
      }),
      pg.rnd(),
      page,
    );
  }

  return out.sort((a, b) => a.at - b.at).map((x) => x.attempt);
}

/**
 * A headless browser at the form's page (it runs it: the token is asked for from its own network and
 * user agent), driven with its tool's defaults: Playwright's or Puppeteer's fill() (the text inserted,
 * no key pressed; 70%) or type() without a delay (30%), then click() on submit (one pointer move per
 * press; 80%) or Enter, 0.1–1 s after load. 30% of the patched stealth ones type with delays, move the
 * pointer in steps and wait 3–5 s: their counts are a person's, and only their other evidence counts.
 */
function headlessVisit(d: Draws, cls: TrafficClass, ip: string, ua: string, email: string): PageVisit {
  const password = 10 + d.int(7);
  const chars = email.length + password;
  const subject = { ipTrunc: truncate(ip), userAgent: ua };
  const none = { pasted: 0, autofilled: 0, touches: 0, untrusted: 0 };
  if (cls === "headless_stealth_patched" && d.rnd() < 0.3) {
    const fillMs = 3_000 + d.int(2_000);
    const clicks = 1 + d.int(2);
    return {
      subject,
      fillMs,
      behaviour: {
        elapsedMs: fillMs + d.int(100),
        keys: chars + 1,
        inserted: 0,
        pointerMoves: clicks * (10 + d.int(30)),
        clicks,
        ...none,
      },
    };
  }
  const typed = d.rnd() < 0.3;
  const enter = d.rnd() < 0.2;
  const fillMs = 100 + d.int(900);
  return {
    subject,
    fillMs,
    behaviour: {
      elapsedMs: fillMs + d.int(50),
      keys: (typed ? chars : 0) + (enter ? 1 : 0),
      inserted: typed ? 0 : 2,
      pointerMoves: enter ? 0 : 1,
      clicks: enter ? 0 : 1,
      ...none,
    },
  };
}

/**
 * Browsers on iOS: every one is WebKit (App Store Review Guideline 2.5.6), so Chrome, Edge and
 * Firefox there send no client hints; Fetch Metadata from iOS 16.4 on, none before.
 */
export function iosProfiles(lang: string): Profile[] {
  const fetch = { "accept-language": lang, ...FETCH };
  return [
    {
      ua: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
      headers: fetch,
    },
    {
      ua: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 EdgiOS/131.2903.68 Mobile/15E148 Safari/605.1.15",
      headers: fetch,
    },
    {
      ua: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15",
      headers: fetch,
    },
    {
      // An iPad asks for desktop sites by default and names itself a Mac.
      ua: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
      headers: fetch,
    },
    {
      ua: "Mozilla/5.0 (iPhone; CPU iPhone OS 15_8 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1",
      headers: { "accept-language": lang },
    },
  ];
}

/** Privacy browsers: Brave (Chromium, its own brand), Tor Browser and LibreWolf (Firefox ESR). */
function privacyProfiles(lang: string): Profile[] {
  const fetch = { "accept-language": lang, ...FETCH };
  return [
    {
      ua: WINDOWS_CHROME_156,
      headers: chromiumNavigation(WINDOWS_CHROME_156, lang, chromeHints(156, "Windows", false, "Brave")),
    },
    {
      ua: MAC_CHROME_155,
      headers: chromiumNavigation(MAC_CHROME_155, lang, chromeHints(155, "macOS", false, "Brave")),
    },
    {
      // Tor Browser reports one user agent and language for everyone.
      ua: "Mozilla/5.0 (Windows NT 10.0; rv:128.0) Gecko/20100101 Firefox/128.0",
      headers: { ...FETCH, "accept-language": "en-US,en;q=0.5" },
    },
    {
      ua: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
      headers: fetch,
    },
  ];
}

/**
 * Real browsers behind an integration that forwards part of the headers: the user agent only, the
 * user agent and Accept-Language, or no `sec-*` (a plain-http origin or a proxy that strips them).
 * (A verify without even a user agent is missing evidence, not a partial set: it is challenged.)
 */
function partialProfiles(lang: string): Profile[] {
  const chrome = browserProfiles(lang)[0] as Profile;
  const safari = browserProfiles(lang)[6] as Profile;
  return [
    { ua: chrome.ua, headers: { "accept-language": lang } },
    { ua: chrome.ua, headers: {} },
    {
      ua: chrome.ua,
      headers: {
        "accept-language": lang,
        accept: "text/html,application/xhtml+xml",
        "accept-encoding": "gzip",
      },
    },
    { ua: safari.ua, headers: {} },
  ];
}

/** People in a native app whose HTTP client names the app (the integration forwards its user agent). */
function nativeAppProfiles(lang: string): Profile[] {
  const headers = { "accept-language": lang, accept: "application/json" };
  return [
    { ua: "AcmeShop/5.2.1 (com.acme.shop; build:5210; iOS 18.1.0) Alamofire/5.9.1", headers },
    { ua: "AcmeShop/5.2.1 (Linux; Android 14; Pixel 8) okhttp/4.12.0", headers },
    { ua: "AcmeShop/5.2 CFNetwork/1568.100.1 Darwin/24.0.0", headers },
    { ua: "Dalvik/2.1.0 (Linux; U; Android 14; SM-S918B Build/UP1A.231005.007)", headers },
  ];
}
