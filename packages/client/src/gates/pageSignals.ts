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
