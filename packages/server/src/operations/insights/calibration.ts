import type { LabelledRiskGroup, RiskGroup } from "../../store/interfaces.js";

export interface CalibrationBin {
  low: number;
  high: number;
  /** Scored events in the bin. */
  events: number;
  /** Of those, events with at least one effective observation. */
  labelled: number;
  /** Of the labelled, events with an effective abuse outcome. */
  abusive: number;
  /** Mean estimated risk of the bin's labelled events (of all its events when none is labelled). */
  meanRisk: number | null;
  observedRate: number | null;
  /** Wilson 95% score interval of abusive / labelled. */
  interval: { low: number; high: number } | null;
}

const Z95 = 1.959964;

/** Wilson score interval for k successes in n trials (better than the normal one near 0 and 1). */
export function wilson(k: number, n: number, z = Z95): { low: number; high: number } {
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/**
 * The reliability diagram's data: scored events in `bins` equal-width bins of estimated risk, with
 * the observed abuse rate among the labelled ones. Events without feedback count in `events` only:
 * an event nobody reported on is not evidence that it was harmless.
 */
export function calibrationBins(
  groups: readonly RiskGroup[],
  labelled: readonly LabelledRiskGroup[],
  bins: number,
): CalibrationBin[] {
  const acc = Array.from({ length: bins }, () => ({
    events: 0,
    riskSum: 0,
    labelled: 0,
    labelledRiskSum: 0,
    abusive: 0,
  }));
  const binOf = (risk: number) => acc[Math.min(bins - 1, Math.floor(risk * bins))] as (typeof acc)[number];
  for (const g of groups) {
    if (!g.risk) continue;
    const b = binOf(g.risk.estimate);
    b.events += g.count;
    b.riskSum += g.risk.estimate * g.count;
  }
  for (const g of labelled) {
    if (!g.risk) continue;
    const b = binOf(g.risk.estimate);
    b.labelled += g.count;
    b.labelledRiskSum += g.risk.estimate * g.count;
    if (g.abusive) b.abusive += g.count;
  }
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  return acc.map((b, i) => ({
    low: round(i / bins),
    high: round((i + 1) / bins),
    events: b.events,
    labelled: b.labelled,
    abusive: b.abusive,
    meanRisk:
      b.labelled > 0
        ? round(b.labelledRiskSum / b.labelled)
        : b.events > 0
          ? round(b.riskSum / b.events)
          : null,
    observedRate: b.labelled > 0 ? round(b.abusive / b.labelled) : null,
    interval:
      b.labelled > 0
        ? (({ low, high }) => ({ low: round(low), high: round(high) }))(wilson(b.abusive, b.labelled))
        : null,
  }));
}
