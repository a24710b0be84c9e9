/**
 * What <warden-challenge> tells a person while the proof of work runs: the time elapsed and how long
 * such a check usually takes on this device, never a percentage. The search is random: the work has no
 * fraction done, only an expected amount (16^difficulty hashes), so the honest estimate is that
 * expectation at the hash rate measured so far, and past it the plain fact that this one is slower.
 */
export interface SolveClock {
  elapsedMs: number;
  /** Over every worker, measured on recent reports (solver.ts); 0 until there are two. */
  hashesPerSecond: number;
  expectedHashes: number;
}

/** No estimate before this much of the solve has run: every worker must be reporting for the rate to hold. */
export const MEASURE_MS = 1500;

/** "7 s", "1 min 5 s": elapsed time, exact to the second. */
export function elapsedText(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** An estimate, rounded as far as it deserves: "under a second", "about 8 s", "about 25 s", "about 3 min". */
export function estimateText(seconds: number): string {
  if (seconds < 1) return "under a second";
  if (seconds < 10) return `about ${Math.round(seconds)} s`;
  if (seconds < 60) return `about ${Math.round(seconds / 5) * 5} s`;
  if (seconds < 120) return `about ${Math.round(seconds / 10) * 10} s`;
  return `about ${Math.round(seconds / 60)} min`;
}

/** The expected solve time on this device in seconds, or undefined while the rate is still measured. */
export function expectedSeconds(clock: SolveClock): number | undefined {
  if (clock.elapsedMs < MEASURE_MS || !(clock.hashesPerSecond > 0)) return undefined;
  return clock.expectedHashes / clock.hashesPerSecond;
}

export interface ProgressText {
  /** "12 s elapsed". */
  elapsed: string;
  /** What to expect, for the line under the status. */
  estimate: string;
  /** The stage, for the live region: it changes at most twice, so a screen reader hears it twice. */
  stage: "measuring" | "usual" | "longer";
  /** The sentence a screen reader is told when the stage changes. */
  announcement: string;
}

export function progressText(clock: SolveClock): ProgressText {
  const elapsed = `${elapsedText(clock.elapsedMs)} elapsed`;
  const expected = expectedSeconds(clock);
  if (expected === undefined) {
    return {
      elapsed,
      estimate: "Measuring how fast this device checks…",
      stage: "measuring",
      announcement: "Checking your browser. This can take a few seconds.",
    };
  }
  const usual = estimateText(expected);
  if (clock.elapsedMs / 1000 <= expected) {
    return {
      elapsed,
      estimate: `Usually ${usual} on this device.`,
      stage: "usual",
      announcement: `Checking your browser: usually ${usual} on this device.`,
    };
  }
  return {
    elapsed,
    estimate: `Taking longer than usual (${usual} on this device): the search is random and some take longer. Still working.`,
    stage: "longer",
    announcement: `Still checking: this one is taking longer than usual (${usual}). It is still working.`,
  };
}
