import fs from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Decision } from "../../domain.js";
import { DEFAULT_TENANT_POLICY } from "../../policy/tenantPolicy.js";
import { DEFAULT_COSTS } from "./decide.js";
import { DEFAULT_MODEL } from "./decisionModel.js";
import { observe } from "./evidence.js";
import type { VerifyRequest } from "./schema.js";
import { assess } from "./scoring.js";
import { HostingNetworks } from "./signals/hostingNetworks.js";
import { LIBRARY_FINGERPRINTS } from "./signals/tlsStacks.js";
import { MAX_USER_AGENT } from "./signals/userAgent.js";
import type { VerifyCall } from "./verdict.js";

/**
 * What the client controls never lowers the risk (docs/security-model.md): the user agent is the
 * client's own text, so no edit of it (its browser token removed, its words reordered, cut short,
 * emptied, made too long to forward, or another browser's) turns a refusal or a challenge into an
 * allow, whatever TLS stack the client shook hands with and whatever headers it forwarded.
 */

const fixture = JSON.parse(
  fs.readFileSync(new URL("./signals/fixtures/tls-ja4.json", import.meta.url), "utf8"),
) as { measured: Record<string, string>; published: Record<string, string> };
const ja4s = { ...fixture.measured, ...fixture.published };
const BROWSER_JA4 = Object.entries(ja4s)
  .filter(([name]) => /chrom|firefox|safari/.test(name))
  .map(([, v]) => v);
const LIBRARY_JA4 = LIBRARY_FINGERPRINTS.flatMap((l) => l.seen);

const NAV = {
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "accept-encoding": "gzip, deflate, br",
  "accept-language": "en-GB,en;q=0.9",
};
const FETCH = { "sec-fetch-site": "same-origin", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
const hints = (brands: string, platform: string, mobile = "?0") => ({
  "sec-ch-ua": brands,
  "sec-ch-ua-mobile": mobile,
  "sec-ch-ua-platform": `"${platform}"`,
});

/** Real browsers' user agents with the headers they send on a secure origin. */
const BROWSERS: readonly { ua: string; headers: Record<string, string> }[] = [
  {
    ua: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
    headers: { ...NAV, ...FETCH, ...hints('"Chromium";v="156", "Not:A-Brand";v="8"', "Windows") },
  },
  {
    ua: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
    headers: { ...NAV, ...FETCH, ...hints('"Not:A-Brand";v="8", "Chromium";v="156"', "Linux") },
  },
  {
    ua: "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
    headers: {
      ...NAV,
      ...FETCH,
      ...hints('"Chromium";v="122", "Not(A:Brand";v="24", "Samsung Internet";v="26"', "Android", "?1"),
    },
  },
  {
    ua: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    headers: { ...NAV, ...FETCH },
  },
  {
    ua: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    headers: { ...NAV, ...FETCH },
  },
  {
    ua: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    headers: { ...NAV, ...FETCH },
  },
];

interface Attempt {
  browser: (typeof BROWSERS)[number];
  /** The browser's headers the client forwards. */
  headers: Record<string, string>;
  tls: { family: string; ja4: string | undefined };
  email: string | undefined;
}

/** The client's TLS handshake: an HTTP library's, a browser's, one Warden does not know, or none forwarded. */
const unknownJa4 = fc
  .record({
    version: fc.constantFrom("13", "12"),
    alpn: fc.constantFrom("h2", "h1", "00"),
    ciphers: fc.stringMatching(/^[0-9a-f]{12}$/),
    extensions: fc.stringMatching(/^[0-9a-f]{12}$/),
  })
  .map((j) => `t${j.version}d1516${j.alpn}_${j.ciphers}_${j.extensions}`);
type TlsFamily = "library" | "browser" | "unknown" | "absent";
const tlsOf = (family: TlsFamily, ja4: fc.Arbitrary<string | undefined>) =>
  ja4.map((value) => ({ family, ja4: value }));
const tls = fc.oneof(
  tlsOf("library", fc.constantFrom(...LIBRARY_JA4)),
  tlsOf("browser", fc.constantFrom(...BROWSER_JA4)),
  tlsOf("unknown", unknownJa4),
  tlsOf("absent", fc.constant(undefined)),
);

/** A browser's request as a client copies it: all of the browser's headers, or some of them. */
const request: fc.Arbitrary<Attempt> = fc
  .record({
    browser: fc.constantFrom(...BROWSERS),
    dropped: fc.subarray([...new Set(BROWSERS.flatMap((b) => Object.keys(b.headers)))]),
    tls,
    email: fc.constantFrom(undefined, "0".repeat(64)),
  })
  .map(({ browser, dropped, tls, email }) => ({
    browser,
    headers: Object.fromEntries(Object.entries(browser.headers).filter(([name]) => !dropped.includes(name))),
    tls,
    email,
  }));

const BROWSER_TOKEN = /\s?(?:Chrome|Firefox|Safari|Version|SamsungBrowser|Edg|CriOS|Mobile)\/[\d.]+/g;

/**
 * The edits a client can make to its user agent (undefined: none sent, as the SDK does with one past
 * MAX_USER_AGENT). `otherFamily` makes it another real browser's: then only a library's handshake
 * still tells, since the headers (and a browser's handshake) may be exactly that browser's.
 */
type Edit = { name: string; otherFamily: boolean; apply: (ua: string) => string | undefined };
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.constant({
    name: "browser token removed",
    otherFamily: false,
    apply: (ua: string) => ua.replace(BROWSER_TOKEN, ""),
  }),
  fc.constant({
    name: "reordered",
    otherFamily: false,
    apply: (ua: string) => ua.split(" ").reverse().join(" "),
  }),
  fc
    .nat({ max: 200 })
    .map((n) => ({ name: `cut at ${n}`, otherFamily: false, apply: (ua: string) => ua.slice(0, n) })),
  fc.constant({ name: "empty", otherFamily: false, apply: () => "" }),
  fc.constant({
    name: "over-long",
    otherFamily: false,
    apply: (ua: string) => (`${ua} ${"x".repeat(MAX_USER_AGENT)}`.length > MAX_USER_AGENT ? undefined : ua),
  }),
  fc
    .constantFrom(...BROWSERS)
    .map((other) => ({ name: "another browser", otherFamily: true, apply: () => other.ua })),
);

const NOW = Date.parse("2026-12-03T10:00:00Z");
const tenant = DEFAULT_TENANT_POLICY;

function decisionOf(req: VerifyRequest): Decision {
  return assessed(req).decision;
}

/** The decision with what it rests on, for a failing case's report. */
function assessed(req: VerifyRequest): {
  decision: Decision;
  findings: string[];
  userAgent: string | undefined;
} {
  const observed = observe(req, {
    model: DEFAULT_MODEL,
    policy: tenant,
    hosting: HostingNetworks.empty(),
    agentKeys: () => undefined,
    nowSeconds: Math.floor(NOW / 1000),
    nowMs: NOW,
    tenantId: "t",
    pageKey: () => undefined,
  });
  const call = {
    req,
    now: NOW,
    costs: DEFAULT_COSTS,
    caller: { tenant: { id: "t" } },
  } as unknown as VerifyCall;
  const a = assess(DEFAULT_MODEL, call, tenant, observed, []);
  return {
    decision: a.decision,
    findings: a.findings.map((f) => `${f.id} ${f.logOdds}`),
    userAgent: req.subject.userAgent,
  };
}

function verifyRequest(r: Attempt, userAgent: string | undefined): VerifyRequest {
  const headers: Record<string, string> = { ...r.headers };
  if (userAgent !== undefined) headers["user-agent"] = userAgent;
  return {
    action: "signup",
    subject: {
      ipTrunc: "203.0.113.0/24",
      ...(userAgent !== undefined ? { userAgent } : {}),
      headers,
      ...(r.email ? { emailSha256: r.email } : {}),
      ...(r.tls.ja4 ? { tls: { ja4: r.tls.ja4 } } : {}),
    },
  } as VerifyRequest;
}

/** The case CI found (headers with Sec-CH-UA-Mobile and -Platform but no Sec-CH-UA). */
const CUT_HINTS_EXAMPLE = {
  browser: {
    ua: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
    headers: {},
  },
  headers: {
    accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "accept-encoding": "gzip, deflate, br",
    "accept-language": "en-GB,en;q=0.9",
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "document",
    "sec-ch-ua-mobile": "?0",
    "sec-ch-ua-platform": '"Linux"',
  },
};

describe("no edit of the user agent lowers the risk", () => {
  it("a library's handshake is never allowed, under its browser user agent or any edit of it", () => {
    fc.assert(
      fc.property(
        request.filter((r) => r.tls.family === "library"),
        edit,
        (r, e) => {
          expect(assessed(verifyRequest(r, r.browser.ua))).not.toMatchObject({ decision: "allow" });
          expect(assessed(verifyRequest(r, e.apply(r.browser.ua)))).not.toMatchObject({ decision: "allow" });
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it("whatever the handshake and headers: an attempt that is challenged or denied is never allowed once its user agent is edited", () => {
    fc.assert(
      fc.property(request, edit, (r, e) => {
        const before = decisionOf(verifyRequest(r, r.browser.ua));
        fc.pre(before !== "allow");
        // Another browser's user agent over a browser's handshake may simply be that browser, which the
        // first disguise contradicted: only a library's handshake stays a program's under every claim.
        fc.pre(!e.otherFamily || r.tls.family === "library");
        const edited = e.apply(r.browser.ua);
        expect({ edit: e.name, before, after: assessed(verifyRequest(r, edited)) }).not.toMatchObject({
          after: { decision: "allow" },
        });
      }),
      {
        numRuns: 3_000,
        // Found in CI: half the Sec-CH-UA group under a user agent cut to "Chrome/1" (a version that
        // predates client hints) was allowed.
        examples: [
          [
            {
              ...CUT_HINTS_EXAMPLE,
              tls: { family: "absent" },
            } as never,
            { name: "cut at 79", otherFamily: false, apply: (ua: string) => ua.slice(0, 79) } as never,
          ],
        ],
      },
    );
  });

  it("a user agent that names no browser, or none at all, is never silently allowed with a library's handshake or half a browser's headers", () => {
    const cut = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)";
    const node = LIBRARY_JA4[0] as string;
    for (const ua of [cut, "", undefined]) {
      const r: Attempt = {
        browser: BROWSERS[0] as Attempt["browser"],
        headers: {},
        tls: { family: "library", ja4: node },
        email: undefined,
      };
      expect(decisionOf(verifyRequest(r, ua))).toBe("deny");
      const { "sec-fetch-dest": _, ...browserHeaders } = r.browser.headers;
      const half: Attempt = { ...r, headers: browserHeaders, tls: { family: "absent", ja4: undefined } };
      expect(decisionOf(verifyRequest(half, ua))).not.toBe("allow");
    }
  });
});
