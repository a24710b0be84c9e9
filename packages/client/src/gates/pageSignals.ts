import { SCOPE_FIELDS } from "../generated/scopeFields.js";
import type { VerifyRequest } from "../types.js";

/** What a page's worker may read differently from the page (@warden/browser's ScopeField). */
const KNOWN_SCOPE_FIELDS: ReadonlySet<string> = new Set(SCOPE_FIELDS);

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
      ...new Set(mismatch.filter((f): f is string => typeof f === "string" && KNOWN_SCOPE_FIELDS.has(f))),
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

type Environment = NonNullable<PageReport["environment"]>;

/** The environment's text members with Warden's caps, and its numbers with their ranges. */
const ENV_TEXT = { screen: 32, timezone: 64, languages: 256, platform: 64, renderer: 256 } as const;
const ENV_NUMBER = {
  colorDepth: [0, 64, true],
  pixelRatio: [0, 16, false],
  cores: [0, 1024, true],
  memory: [0, 1024, false],
  touchPoints: [0, 256, true],
} as const;
const MAX_PROBE = 64;

/**
 * The page's environment (@warden/browser watchPage): its known members within Warden's caps; a
 * member out of them is dropped (Warden would refuse the whole verify over it).
 */
function environmentOf(value: unknown): Environment | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const env: Environment = {};
  for (const [field, max] of Object.entries(ENV_TEXT) as [keyof typeof ENV_TEXT, number][]) {
    const text = v[field];
    if (typeof text === "string" && text.length <= max) env[field] = text;
  }
  for (const [field, [min, max, whole]] of Object.entries(ENV_NUMBER) as [
    keyof typeof ENV_NUMBER,
    readonly [number, number, boolean],
  ][]) {
    const n = v[field];
    if (typeof n === "number" && n >= min && n <= max && (!whole || Number.isInteger(n))) env[field] = n;
  }
  if (typeof v.canvas === "string" && /^[0-9a-f]{1,64}$/.test(v.canvas)) env.canvas = v.canvas;
  if (typeof v.canvasNoise === "boolean") env.canvasNoise = v.canvasNoise;
  if (
    Array.isArray(v.probe) &&
    v.probe.length <= MAX_PROBE &&
    v.probe.every((n) => typeof n === "number" && Math.abs(n) <= 1e6)
  ) {
    env.probe = v.probe as number[];
  }
  return env;
}

/**
 * The page's evidence (@warden/browser watchPage's report): its token, its known counts, each a
 * whole number within Warden's caps, and its environment's known members. Anything else is dropped rather than sent: Warden would refuse
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
  const { token, behaviour, environment } = value as Record<string, unknown>;
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
  const env = environmentOf(environment);
  if (env) report.environment = env;
  return report;
}
