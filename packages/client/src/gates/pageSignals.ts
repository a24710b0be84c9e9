import type { VerifyRequest } from "../types.js";

/** What a page's worker may read differently from the page (@warden/browser's ScopeField). */
const SCOPE_FIELDS = new Set([
  "userAgent",
  "platform",
  "hardwareConcurrency",
  "languages",
  "userAgentData",
  "webgl",
]);

type PageSignals = NonNullable<VerifyRequest["subject"]["browserSignals"]>;

/** The page's report (@warden/browser collectSignals): only its known members, in their own types. */
export function browserSignalsOf(value: unknown): PageSignals | undefined {
  if (typeof value === "string") {
    try {
      return browserSignalsOf(JSON.parse(value));
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { webdriver, mismatch, workerHeadless } = value as Record<string, unknown>;
  if (typeof webdriver !== "boolean") return undefined;
  const signals: PageSignals = { webdriver };
  if (Array.isArray(mismatch)) {
    const known = [
      ...new Set(mismatch.filter((f): f is string => typeof f === "string" && SCOPE_FIELDS.has(f))),
    ];
    if (known.length > 0) signals.mismatch = known;
  }
  if (workerHeadless === true) signals.workerHeadless = true;
  return signals;
}

type PageReport = NonNullable<VerifyRequest["subject"]["page"]>;
type Behaviour = NonNullable<PageReport["behaviour"]>;

/** The behaviour counts @warden/browser's watchPage reports (Warden's subject.page.behaviour). */
const BEHAVIOUR_FIELDS = [
  "elapsedMs",
  "keys",
  "inserted",
  "pasted",
  "autofilled",
  "pointerMoves",
  "clicks",
  "touches",
  "untrusted",
] as const satisfies readonly (keyof Behaviour)[];

/** Warden's caps: a token of at most 512 characters, counts that are whole numbers up to 10^9. */
const MAX_TOKEN = 512;
const MAX_COUNT = 1_000_000_000;

/**
 * The page's evidence (@warden/browser watchPage's report): its token and its known counts, each a
 * whole number within Warden's caps. Anything else is dropped rather than sent: Warden would refuse
 * the whole verify, and a page (a bot's, too) can send anything.
 */
export function pageReportOf(value: unknown): PageReport | undefined {
  if (typeof value === "string") {
    try {
      return pageReportOf(JSON.parse(value));
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { token, behaviour } = value as Record<string, unknown>;
  if (typeof token !== "string" || token === "" || token.length > MAX_TOKEN) return undefined;
  const report: PageReport = { token };
  if (typeof behaviour === "object" && behaviour !== null) {
    const counts: Behaviour = {};
    for (const field of BEHAVIOUR_FIELDS) {
      const n = (behaviour as Record<string, unknown>)[field];
      if (typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= MAX_COUNT) counts[field] = n;
    }
    report.behaviour = counts;
  }
  return report;
}
