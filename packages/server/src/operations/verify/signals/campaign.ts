import { sha256Hex } from "../../../lib/crypto.js";
import type { CounterHit, CounterReading } from "../../../store/interfaces.js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { HeaderMap } from "./browserHeaders.js";
import type { Finding } from "./findings.js";
import type { Ja4 } from "./tlsFingerprint.js";
import type { UserAgentSignal } from "./userAgent.js";
import { slidingCount } from "./velocity.js";

/**
 * Campaigns: many attempts from one setup, spread over networks and addresses so that no network,
 * address or mailbox is over its limit. A campaign can vary what costs nothing (addresses, names, the
 * browser's version), not what its tooling is: its TLS stack and the order of its headers (its shape),
 * and the environment its page reports (one machine's browsers, or one captured report replayed).
 *
 * Each attempt counts its shape and its environment over the last ten minutes and the last day, beside
 * the tenant's total for the action over the same windows. Against the day's baseline, a shape that a
 * large share of the tenant's people share (one phone model, the newest Chrome on Windows) is expected
 * in proportion to the others' traffic and never surges; one that goes from nothing to dozens in ten
 * minutes does. Every count is a counter of the store, hashed like velocity's (nothing personal).
 */

export type CampaignKind = "shape" | "environment";

export interface CampaignKey {
  kind: CampaignKind;
  value: string;
}

export interface CampaignWeights {
  /** log-odds added when a key first passes its surge ratio */
  surge: number;
  /** log-odds added for each doubling beyond it */
  perDoubling: number;
  cap: number;
  /**
   * log-odds of a surge that is one machine's browsers: an environment the tenant's last day had next
   * to nothing of, its attempts spread over networks (none of them sending more than its share).
   * Automation evidence: a proof of work is no friction to it.
   */
  machine: number;
}

/** The rule that separates a campaign from a popular device (docs/decisions.md, "Campaigns"). */
export interface CampaignRules {
  /** The fewest attempts of one key in ten minutes that can be a surge. */
  floor: number;
  /** How many times its expected count a key must reach. */
  ratio: number;
  /**
   * The chance, per attempt, that a key the day has seen reaches its threshold at its expected rate
   * (its count taken as Poisson about what is expected): a key a few percent of the people share is
   * expected once to three times in ten minutes, and at a few thousand attempts a day a floor of 6
   * alone is reached by chance; the count that chance reaches this rarely is the threshold then.
   */
  chance: number;
  /**
   * The share one environment is assumed to hold before the tenant has a day's baseline: people's
   * environments differ (one phone model and setting at most a few percent of a site's people).
   */
  environmentPriorShare: number;
  /** How many of the day's attempts the prior weighs as (it fades as the baseline grows). */
  priorWeight: number;
  /**
   * The day's attempts a tenant needs before its shapes are judged: a new site's people may all share
   * one shape (one browser, one language), which says nothing until its usual share is known.
   */
  shapeMinBaseline: number;
}

export const SHORT_WINDOW_MS = 10 * 60_000;
export const LONG_WINDOW_MS = 86_400_000;

/** Headers every client's request may or may not carry for reasons of its own (sessions, proxies, the body). */
const VOLATILE_HEADER =
  /^(cookie|authorization|content-length|content-type|forwarded|via|x-|cf-|true-client|cdn-)/;

/**
 * The keys an attempt counts under: its shape (the TLS fingerprint as the edge saw it, the order of
 * its header names, the browser family and platform, the preferred language) and its page's
 * environment digest (pageEnvironment.ts). A request without headers, user agent or fingerprint has
 * no shape worth counting.
 */
export function campaignKeys(
  ua: UserAgentSignal,
  headers: HeaderMap | undefined,
  ja4: Ja4 | undefined,
  environment: string | undefined,
): CampaignKey[] {
  const keys: CampaignKey[] = [];
  const names = headers ? Object.keys(headers).filter((n) => !VOLATILE_HEADER.test(n)) : [];
  if (names.length > 0 || ja4) {
    const language = (headers?.["accept-language"] ?? "").split(/[,;]/)[0]?.trim().toLowerCase() ?? "";
    keys.push({
      kind: "shape",
      value: [ja4?.text ?? "", names.join(","), ua.browser?.family ?? ua.claim, ua.os ?? "", language].join(
        "|",
      ),
    });
  }
  if (environment) keys.push({ kind: "environment", value: environment });
  return keys;
}

/** Whether a key is also counted per network: an environment, when the attempt has one. */
const perNetwork = (key: CampaignKey, network: string | undefined): network is string =>
  key.kind === "environment" && network !== undefined;

/**
 * The counters one attempt hits: the tenant's totals, then each key's over both windows, an
 * environment's also over ten minutes from the attempt's network (truncated, as velocity counts it).
 */
export function campaignHits(
  tenantId: string,
  action: string,
  keys: readonly CampaignKey[],
  network: string | undefined,
): CounterHit[] {
  // The totals count the attempts that have a key: the baseline of those that can surge.
  if (keys.length === 0) return [];
  const total = `c:${sha256Hex(`${tenantId}\n${action}\ncampaign-total`)}`;
  const hits: CounterHit[] = [
    { name: total, windowMs: SHORT_WINDOW_MS, tenantId },
    { name: total, windowMs: LONG_WINDOW_MS, tenantId },
  ];
  for (const key of keys) {
    const name = `c:${sha256Hex(`${tenantId}\n${action}\n${key.kind}\n${key.value}`)}`;
    hits.push({ name, windowMs: SHORT_WINDOW_MS, tenantId }, { name, windowMs: LONG_WINDOW_MS, tenantId });
    if (perNetwork(key, network)) {
      const here = `c:${sha256Hex(`${tenantId}\n${action}\n${key.kind}-network\n${key.value}\n${network}`)}`;
      hits.push({ name: here, windowMs: SHORT_WINDOW_MS, tenantId });
    }
  }
  return hits;
}

/** One key's counts as the rule reads them. */
export interface CampaignReading {
  kind: CampaignKind;
  /** The key's attempts in the last ten minutes, this one included. */
  count: number;
  /** What its baseline share of the others' attempts in those ten minutes makes expected. */
  expected: number;
  /** The key's attempts in the day before those ten minutes. */
  before: number;
  /** An environment's attempts in the ten minutes from this attempt's network, this one included. */
  fromNetwork?: number;
}

/** The readings of `campaignHits`' counters (in its order, for the same keys and network), key by key. */
export function campaignReadings(
  keys: readonly CampaignKey[],
  network: string | undefined,
  readings: readonly CounterReading[],
  rules: CampaignRules,
): CampaignReading[] {
  const at = (i: number) => (readings[i] ? slidingCount(readings[i] as CounterReading) : 0);
  const totalShort = at(0);
  const totalLong = at(1);
  let next = 2;
  return keys.map((key) => {
    const count = at(next++);
    const long = at(next++);
    const fromNetwork = perNetwork(key, network) ? at(next++) : undefined;
    // The day before these ten minutes is the baseline; for an environment a prior stands in while
    // it is thin; a shape waits for it.
    const baseKey = Math.max(0, long - count);
    const baseTotal = Math.max(0, totalLong - totalShort);
    const seen = { before: baseKey, ...(fromNetwork !== undefined && { fromNetwork }) };
    if (key.kind === "shape" && baseTotal < rules.shapeMinBaseline) {
      return { kind: key.kind, count, expected: Number.POSITIVE_INFINITY, ...seen };
    }
    const prior = key.kind === "environment" ? rules.environmentPriorShare : 0;
    const share = (baseKey + rules.priorWeight * prior) / (baseTotal + rules.priorWeight);
    // The others' attempts in the window: a campaign's own attempts never raise what it is held to.
    const others = Math.max(0, totalShort - count);
    // The key's expected count beside the others': its odds, share / (1 − share), held below 9; and at
    // least its own rate of the day (a key that is all of a site's traffic has no others to match).
    const odds = Math.min(share, 0.9) / (1 - Math.min(share, 0.9));
    return {
      kind: key.kind,
      count,
      expected: Math.max(others * odds, (baseKey * SHORT_WINDOW_MS) / LONG_WINDOW_MS),
      ...seen,
    };
  });
}

/**
 * Whether a surging key is one machine's browsers rather than people on one device model: an
 * environment whose ten minutes hold at least `ratio` times all of the day before them (people's
 * devices are there every day; a new release of one reaches a site's people over days), and of
 * which at most half came from this attempt's network. A class or an office signing up together on
 * identical laptops from its one network is not this (its network's velocity speaks for it); a
 * campaign that rotates even two networks is.
 */
function oneMachine(r: CampaignReading, rules: CampaignRules): boolean {
  return (
    r.kind === "environment" &&
    r.fromNetwork !== undefined &&
    r.before * rules.ratio < r.count &&
    r.fromNetwork * 2 <= r.count
  );
}

const LABEL: Record<CampaignKind, string> = {
  shape: "one request shape (TLS handshake, header order, browser family, platform and language)",
  environment: "one browser environment as its page reported it (screen, hardware, graphics, canvas)",
};

/** One machine's surge before any other, then the stronger. */
const outranks = (a: Finding, b: Finding): boolean =>
  a.automation === b.automation ? a.logOdds > b.logOdds : a.automation === true;

/**
 * The fewest attempts that a key expected `expected` times reaches with a chance of at most `chance`:
 * the smallest k with P(X ≥ k) ≤ chance for X Poisson about `expected` (its terms in log space, so a
 * large expectation does not underflow).
 */
export function chanceThreshold(expected: number, chance: number): number {
  if (!(expected > 0)) return 1;
  let logTerm = -expected; // log P(X = k), from k = 0
  let below = 0; // P(X < k)
  for (let k = 0; ; k++) {
    if (1 - below <= chance) return k;
    below += Math.exp(logTerm);
    logTerm += Math.log(expected / (k + 1));
  }
}

/**
 * The count from which a key surges: at least the floor and its ratio of what is expected; and, for a
 * key the day before these ten minutes had (a share measured, not the prior's guess), the count
 * chance reaches only rarely about it. A key new to the day is no chance swing of a known share: a
 * campaign's environment is held to the floor. Past about 17 expected, `ratio` times it lies beyond
 * any tail a policy would ask for (mean + 10 standard deviations + 10), so the tail is not summed.
 */
export function surgeThreshold(
  r: Pick<CampaignReading, "expected" | "before">,
  rules: CampaignRules,
): number {
  const byRatio = rules.ratio * r.expected;
  const byChance =
    r.before > 0 && byRatio < r.expected + 10 * Math.sqrt(r.expected) + 10
      ? chanceThreshold(r.expected, rules.chance)
      : 0;
  return Math.max(rules.floor, byRatio, byChance);
}

/** One finding for the key that surges most, growing per doubling up to the cap. */
export function campaignFindings(
  action: string,
  readings: readonly CampaignReading[],
  rules: CampaignRules,
  w: CampaignWeights,
): Finding[] {
  let worst: Finding | undefined;
  for (const r of readings) {
    const threshold = surgeThreshold(r, rules);
    if (r.count < threshold) continue;
    const attempts = `About ${Math.round(r.count)} ${action} attempts in the last 10 minutes came from ${LABEL[r.kind]}`;
    const found: Finding = oneMachine(r, rules)
      ? {
          id: "campaign_surge",
          logOdds: w.machine,
          automation: true,
          reason: `${attempts}, spread over networks (${Math.round(r.fromNetwork ?? 0)} from this one), where this tenant's last day had ${Math.round(r.before)}: one machine's browsers, not people on one device model.`,
        }
      : {
          id: "campaign_surge",
          logOdds: Math.min(w.cap, w.surge + w.perDoubling * Math.log2(r.count / threshold)),
          reason: `${attempts}, against about ${r.expected.toFixed(1)} expected from this tenant's last day: many networks, one setup.`,
        };
    if (!worst || outranks(found, worst)) worst = found;
  }
  return worst ? [worst] : [];
}

export const CAMPAIGN_CODES = { campaign_surge: "velocity" } as const satisfies Record<
  string,
  ReasonCategory
>;
