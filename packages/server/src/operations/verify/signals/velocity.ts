import { sha256Hex } from "../../../lib/crypto.js";
import type { VelocityKind } from "../../../policy/tenantPolicy.js";
import type { CounterHit, CounterReading } from "../../../store/interfaces.js";
import type { Finding } from "./findings.js";

export type { VelocityKind } from "../../../policy/tenantPolicy.js";

/** Attempts allowed per window before the count becomes evidence; a missing window is not counted. */
export interface VelocityLimits {
  perMinute?: number;
  perHour?: number;
  perDay?: number;
}

export interface VelocityWeights {
  /** log-odds added when the estimate first passes the limit */
  overLimit: number;
  /** log-odds added for each doubling beyond the limit */
  perDoubling: number;
  cap: number;
}

export interface VelocityKey {
  kind: VelocityKind;
  /** Protected value (truncated network, hash, or a domain). */
  value: string;
}

const WINDOWS = [
  { field: "perMinute", ms: 60_000, text: "minute" },
  { field: "perHour", ms: 3_600_000, text: "hour" },
  { field: "perDay", ms: 86_400_000, text: "day" },
] as const;

const LABEL: Record<VelocityKind, string> = {
  ip_network: "This network",
  email_hash: "This email address",
  email_normalized: "This mailbox (counting its +tag and dot variants)",
  email_domain: "This email domain",
  session: "This session",
  form_value: "The same form text",
  page_token: "One page token",
};

/** One counter to hit: which key, over which window, with which limit. */
export interface VelocityCheck {
  key: VelocityKey;
  limit: number;
  window: (typeof WINDOWS)[number];
  hit: CounterHit;
}

/**
 * The counters to hit for these keys: one per distinct key and window that has a limit (a key given
 * twice is one attempt, counted once). Counter names are hashes of tenant, action, kind and value, so
 * the counters table holds nothing personal.
 */
export function velocityChecks(
  tenantId: string,
  action: string,
  keys: readonly VelocityKey[],
  limits: Readonly<Partial<Record<VelocityKind, VelocityLimits>>>,
): VelocityCheck[] {
  const out: VelocityCheck[] = [];
  const seen = new Set<string>();
  for (const key of keys) {
    const kindLimits = limits[key.kind];
    if (!kindLimits) continue;
    const name = `v:${sha256Hex(`${tenantId}\n${action}\n${key.kind}\n${key.value}`)}`;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const window of WINDOWS) {
      const limit = kindLimits[window.field];
      if (limit !== undefined) out.push({ key, limit, window, hit: { name, windowMs: window.ms, tenantId } });
    }
  }
  return out;
}

/** Sliding-window estimate from two fixed buckets: the previous one weighted by how much of it still overlaps. */
export function slidingCount(r: CounterReading): number {
  return r.current + r.previous * (1 - r.elapsed);
}

/**
 * One finding per kind over its limit (its worst key and window), growing per doubling up to the
 * kind's cap: several counters of one kind never stack.
 */
export function velocityFindings(
  action: string,
  checks: readonly VelocityCheck[],
  readings: readonly CounterReading[],
  weightsByKind: Readonly<Record<VelocityKind, VelocityWeights>>,
): Finding[] {
  const worst = new Map<VelocityKind, Finding>();
  checks.forEach((c, i) => {
    const reading = readings[i];
    if (!reading) return;
    const count = slidingCount(reading);
    if (count <= c.limit) return;
    const weights = weightsByKind[c.key.kind];
    const logOdds = Math.min(
      weights.cap,
      weights.overLimit + weights.perDoubling * Math.log2(count / c.limit),
    );
    const previous = worst.get(c.key.kind);
    if (previous && previous.logOdds >= logOdds) return;
    worst.set(c.key.kind, {
      id: `velocity_${c.key.kind}`,
      logOdds,
      reason: `${LABEL[c.key.kind]} made about ${Math.round(count)} ${action} attempts in the last ${c.window.text}, above the limit of ${c.limit}.`,
    });
  });
  return [...worst.values()];
}

/** Merges a tenant's limits over the built-in ones, per kind and window. */
export function mergeLimits(
  base: Readonly<Partial<Record<VelocityKind, VelocityLimits>>>,
  tenant: Readonly<Partial<Record<VelocityKind, VelocityLimits | undefined>>>,
): Partial<Record<VelocityKind, VelocityLimits>> {
  const out: Partial<Record<VelocityKind, VelocityLimits>> = { ...base };
  for (const [kind, limits] of Object.entries(tenant) as [VelocityKind, VelocityLimits | undefined][]) {
    if (limits) out[kind] = { ...base[kind], ...limits };
  }
  return out;
}
