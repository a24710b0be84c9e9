import { describe, expect, it } from "vitest";
import { elapsedText, estimateText, MEASURE_MS, progressText } from "./progressText.js";

/** Difficulty 6 (16^6 hashes) at 2 million hashes a second: about 8.4 s expected. */
const clock = (elapsedMs: number, hashesPerSecond = 2_000_000, expectedHashes = 16 ** 6) => ({
  elapsedMs,
  hashesPerSecond,
  expectedHashes,
});

describe("the widget's progress text", () => {
  it("never shows a percentage, whatever the elapsed time, rate and difficulty", () => {
    for (const d of [4, 5, 6, 7, 8]) {
      for (const rate of [0, 50_000, 2_000_000, 40_000_000]) {
        for (const ms of [0, 400, 1000, 5000, 23_000, 600_000]) {
          const t = progressText(clock(ms, rate, 16 ** d));
          expect(`${t.elapsed} ${t.estimate} ${t.announcement}`).not.toMatch(/%|percent|likely done/);
        }
      }
    }
  });

  it("counts elapsed seconds exactly, then minutes and seconds", () => {
    expect(elapsedText(0)).toBe("0 s");
    expect(elapsedText(23_900)).toBe("23 s");
    expect(elapsedText(65_000)).toBe("1 min 5 s");
    expect(progressText(clock(12_400)).elapsed).toBe("12 s elapsed");
  });

  it("gives no estimate until every worker has had time to report", () => {
    expect(progressText(clock(MEASURE_MS - 1)).stage).toBe("measuring");
    expect(progressText(clock(5000, 0)).stage).toBe("measuring");
    expect(progressText(clock(MEASURE_MS)).stage).toBe("usual");
  });

  it("estimates the expected work (16^difficulty hashes) at the measured rate", () => {
    // 16^6 / 2,000,000 = 8.39 s.
    expect(progressText(clock(2000)).estimate).toBe("Usually about 8 s on this device.");
    // 16^7 / 2,000,000 = 134 s; the same device at a quarter of the rate: 537 s.
    expect(progressText(clock(2000, 2_000_000, 16 ** 7)).estimate).toBe(
      "Usually about 2 min on this device.",
    );
    expect(progressText(clock(2000, 500_000, 16 ** 7)).estimate).toBe("Usually about 9 min on this device.");
    // Estimated only after MEASURE_MS: a check that usually takes less is already taking longer.
    expect(progressText(clock(MEASURE_MS, 40_000_000)).estimate).toMatch(
      /^Taking longer than usual \(under a second on this device\)/,
    );
  });

  it("says plainly when a solve runs past the expected time, and that it is still working", () => {
    const past = progressText(clock(23_000));
    expect(past.stage).toBe("longer");
    expect(past.estimate).toBe(
      "Taking longer than usual (about 8 s on this device): the search is random and some take longer. Still working.",
    );
    expect(past.announcement).toMatch(/taking longer than usual \(about 8 s\)\. It is still working/);
  });

  it("rounds estimates as far as they deserve", () => {
    expect(estimateText(0.4)).toBe("under a second");
    expect(estimateText(3.4)).toBe("about 3 s");
    expect(estimateText(23)).toBe("about 25 s");
    expect(estimateText(94)).toBe("about 90 s");
    expect(estimateText(400)).toBe("about 7 min");
  });
});
