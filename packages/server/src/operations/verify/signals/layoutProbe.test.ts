import { describe, expect, it } from "vitest";
import { layoutProbe, MAX_PROBE_ANSWER, probeAnswered } from "./layoutProbe.js";

describe("the layout probe of a page token", () => {
  it("is the same for one nonce wherever it is computed, and another for another nonce", () => {
    const a = layoutProbe("nonce-a");
    expect(layoutProbe("nonce-a")).toEqual(a);
    expect(layoutProbe("nonce-b").expected).not.toEqual(a.expected);
  });

  it("expects whole, positive sizes, two per child, within the answer's cap", () => {
    for (let i = 0; i < 500; i++) {
      const { boxes, expected } = layoutProbe(`n${i}`);
      const children = boxes.reduce((n, b) => n + b.children.length, 0);
      expect(expected).toHaveLength(2 * children);
      expect(expected.length).toBeLessThanOrEqual(MAX_PROBE_ANSWER);
      for (const size of expected) {
        expect(Number.isInteger(size)).toBe(true);
        expect(size).toBeGreaterThan(0);
      }
    }
  });

  it("accepts measurements within a pixel of each size and nothing else", () => {
    const { expected } = layoutProbe("n");
    expect(probeAnswered([...expected], expected)).toBe(true);
    expect(
      probeAnswered(
        expected.map((n, i) => (i % 2 ? n + 1 : n - 1)),
        expected,
      ),
    ).toBe(true);
    expect(
      probeAnswered(
        expected.map((n, i) => (i === 3 ? n + 2 : n)),
        expected,
      ),
    ).toBe(false);
    expect(probeAnswered(expected.slice(1), expected)).toBe(false);
    expect(
      probeAnswered(
        expected.map(() => 0),
        expected,
      ),
    ).toBe(false);
    expect(probeAnswered(undefined, expected)).toBe(false);
    expect(probeAnswered(expected.map(String), expected)).toBe(false);
    // Another token's probe answers this one only by chance: never over these nonces.
    for (let i = 0; i < 200; i++) expect(probeAnswered(layoutProbe(`o${i}`).expected, expected)).toBe(false);
  });
});
