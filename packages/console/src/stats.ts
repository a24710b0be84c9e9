/** Sums the overview draws from /v1/stats/decisions rows (pure: no DOM, no fetch). */
import {
  ABUSE_OUTCOMES,
  type AttemptRow,
  DECISIONS,
  type Decision,
  type DecisionRow,
  GOOD_OUTCOMES,
} from "./types.js";

export interface DecisionTotals {
  total: number;
  allow: number;
  challenge: number;
  deny: number;
  degraded: number;
  logOnly: number;
}

export function totals(rows: DecisionRow[]): DecisionTotals {
  const t: DecisionTotals = { total: 0, allow: 0, challenge: 0, deny: 0, degraded: 0, logOnly: 0 };
  for (const r of rows) {
    t.total += r.count;
    if (isDecision(r.decision)) t[r.decision] += r.count;
    if (r.degraded) t.degraded += r.count;
    if (r.enforcementMode === "log_only") t.logOnly += r.count;
  }
  return t;
}

/** Attempts by how they ended (/v1/stats/attempts rows), and those whose first verdict was degraded. */
export interface AttemptTotals {
  total: number;
  allowed: number;
  cleared: number;
  challenged: number;
  denied: number;
  degraded: number;
}

export function attemptTotals(rows: AttemptRow[]): AttemptTotals {
  const t: AttemptTotals = { total: 0, allowed: 0, cleared: 0, challenged: 0, denied: 0, degraded: 0 };
  for (const r of rows) {
    t.total += r.count;
    t[r.ending] += r.count;
    if (r.degraded) t.degraded += r.count;
  }
  return t;
}

export function isDecision(value: string): value is Decision {
  return (DECISIONS as readonly string[]).includes(value);
}

/** One line of a breakdown: the key, the total and the count per decision. */
export interface Breakdown {
  key: string;
  total: number;
  allow: number;
  challenge: number;
  deny: number;
}

/** Counts by one column (action, actorType…), largest first, ties by name. */
export function breakdownBy(rows: DecisionRow[], column: (r: DecisionRow) => string): Breakdown[] {
  const by = new Map<string, Breakdown>();
  for (const r of rows) {
    const key = column(r);
    let b = by.get(key);
    if (!b) {
      b = { key, total: 0, allow: 0, challenge: 0, deny: 0 };
      by.set(key, b);
    }
    b.total += r.count;
    if (isDecision(r.decision)) b[r.decision] += r.count;
  }
  return [...by.values()].sort((a, b) => b.total - a.total || a.key.localeCompare(b.key));
}

/** decision × enforcementMode: one line per decision, one count per mode. */
export function decisionByMode(
  rows: DecisionRow[],
  modes: readonly string[],
): { decision: string; counts: Record<string, number>; total: number }[] {
  const decisions = [...DECISIONS, ...new Set(rows.map((r) => r.decision).filter((d) => !isDecision(d)))];
  return decisions.map((decision) => {
    const counts: Record<string, number> = Object.fromEntries(modes.map((m) => [m, 0]));
    let total = 0;
    for (const r of rows) {
      if (r.decision !== decision) continue;
      counts[r.enforcementMode] = (counts[r.enforcementMode] ?? 0) + r.count;
      total += r.count;
    }
    return { decision, counts, total };
  });
}

const STEP = { hour: 3600, day: 86400 } as const;

export interface Buckets {
  /** Bucket starts in seconds, every bucket of the range (empty ones too). */
  xs: number[];
  counts: Record<Decision, number[]>;
  /** The buckets that hold events, for the table alternative. */
  nonEmpty: { start: string; allow: number; challenge: number; deny: number; total: number }[];
}

/**
 * The chart's series: every bucket from the one holding `since` to the one holding `until`, zero
 * where no row falls (rows only name non-zero combinations). Buckets are UTC hours or days, as the
 * API's bucketStart values are; rows outside that grid are placed at their own start.
 */
export function bucketSeries(
  rows: DecisionRow[],
  since: string,
  until: string,
  bucket: "hour" | "day",
): Buckets {
  const step = STEP[bucket];
  const sums = new Map<number, Record<Decision, number>>();
  for (const r of rows) {
    const at = Math.floor(Date.parse(r.bucketStart) / 1000);
    if (!Number.isFinite(at)) continue;
    let s = sums.get(at);
    if (!s) {
      s = { allow: 0, challenge: 0, deny: 0 };
      sums.set(at, s);
    }
    if (isDecision(r.decision)) s[r.decision] += r.count;
  }
  const from = Math.floor(Date.parse(since) / 1000 / step) * step;
  const to = Math.floor(Date.parse(until) / 1000);
  const grid = new Set<number>(sums.keys());
  // At most ~1,500 points: a long range in hours is still drawable.
  if (Number.isFinite(from) && Number.isFinite(to) && (to - from) / step <= 1500) {
    for (let x = from; x < to; x += step) grid.add(x);
  }
  const xs = [...grid].sort((a, b) => a - b);
  const counts: Record<Decision, number[]> = { allow: [], challenge: [], deny: [] };
  const nonEmpty: Buckets["nonEmpty"] = [];
  for (const x of xs) {
    const s = sums.get(x) ?? { allow: 0, challenge: 0, deny: 0 };
    for (const d of DECISIONS) counts[d].push(s[d]);
    const total = s.allow + s.challenge + s.deny;
    if (sums.has(x)) nonEmpty.push({ start: new Date(x * 1000).toISOString(), ...s, total });
  }
  return { xs, counts, nonEmpty };
}

/**
 * What a decision × outcome cell says: an allow later shown to be abuse is a miss; a challenge or a
 * deny of a user who later converted or was found not abusive is friction on a good user.
 */
export function flagOf(decision: string, outcome: string): "missed" | "friction" | null {
  if (decision === "allow" && ABUSE_OUTCOMES.includes(outcome)) return "missed";
  if ((decision === "challenge" || decision === "deny") && GOOD_OUTCOMES.includes(outcome)) return "friction";
  return null;
}
