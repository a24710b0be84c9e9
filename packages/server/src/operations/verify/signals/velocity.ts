import { sha256Hex } from "../../../lib/crypto.js";
import type { CounterHit, CounterReading } from "../../../store/interfaces.js";
import type { Finding } from "./findings.js";

export type VelocityKind = "ip_network" | "email_hash";

export interface VelocityLimit {
  /** Attempts per window above which the count becomes evidence. */
  limit: number;
  windowMs: number;
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
  /** Protected value (truncated network or email hash). */
  value: string;
}

const LABEL: Record<VelocityKind, string> = {
  ip_network: "This network",
  email_hash: "This email address",
};

/** Counter names are hashes of tenant, action, kind and value: the counters table holds nothing personal. */
export function velocityHits(
  tenantId: string,
  action: string,
  keys: readonly VelocityKey[],
  limits: Readonly<Record<VelocityKind, VelocityLimit>>,
): CounterHit[] {
  return keys.map((k) => ({
    name: `v:${sha256Hex(`${tenantId}\n${action}\n${k.kind}\n${k.value}`)}`,
    windowMs: limits[k.kind].windowMs,
  }));
}

/** Sliding-window estimate from two fixed buckets: the previous one weighted by how much of it still overlaps. */
export function slidingCount(r: CounterReading): number {
  return r.current + r.previous * (1 - r.elapsed);
}

function windowText(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? "hour" : `${ms / 3_600_000} hours`;
  return `${Math.round(ms / 60_000)} minutes`;
}

export function velocityFindings(
  action: string,
  keys: readonly VelocityKey[],
  readings: readonly CounterReading[],
  limits: Readonly<Record<VelocityKind, VelocityLimit>>,
  weights: VelocityWeights,
): Finding[] {
  const out: Finding[] = [];
  keys.forEach((k, i) => {
    const reading = readings[i];
    if (!reading) return;
    const { limit, windowMs } = limits[k.kind];
    const count = slidingCount(reading);
    if (count <= limit) return;
    const logOdds = Math.min(weights.cap, weights.overLimit + weights.perDoubling * Math.log2(count / limit));
    out.push({
      id: `velocity_${k.kind}`,
      logOdds,
      reason: `${LABEL[k.kind]} made about ${Math.round(count)} ${action} attempts in the last ${windowText(windowMs)}, above the limit of ${limit}.`,
    });
  });
  return out;
}
