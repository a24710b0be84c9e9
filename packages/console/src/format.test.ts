import { describe, expect, it } from "vitest";
import { roundWeight, weight } from "./format.js";

describe("cost weights", () => {
  it("every step of the what-if sliders (log10 from −1 to 2 by 0.01) lands on a weight of its own", () => {
    // What the slider does on each arrow key: position → weight (rounded as shown) → the position the
    // input shows for that weight, snapped to the step. Each step must come back to itself, or the
    // weight is stuck there (0.1 × 10^0.01 rounded to two decimals was 0.1 again).
    let last = 0;
    for (let k = 0; k <= 300; k++) {
      const position = -1 + k / 100;
      const w = roundWeight(10 ** position);
      expect(w, `step ${k}`).toBeGreaterThan(last);
      expect(Math.round((Math.log10(w) + 1) * 100), `step ${k} comes back`).toBe(k);
      last = w;
    }
  });

  it("is shown as rounded: two decimals, three significant digits below 1", () => {
    expect([0.1, 0.1023, 0.25, 1, 1.0233, 2.5, 31.6228, 100].map(weight)).toEqual([
      "0.1",
      "0.102",
      "0.25",
      "1",
      "1.02",
      "2.5",
      "31.62",
      "100",
    ]);
    expect(weight(Number.NaN)).toBe("–");
  });
});
