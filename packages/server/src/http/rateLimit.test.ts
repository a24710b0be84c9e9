import { describe, expect, it } from "vitest";
import { retryAfterSeconds } from "../operations/rateLimitWindow.js";

describe("Retry-After", () => {
  it.each([
    [0, 1],
    [1, 1],
    [1500, 2],
    [60_000, 60],
    [3_600_000, 60],
  ])("spec, Limits: clamped to 1..60 seconds (%i ms until reset → %i s)", (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds);
  });
});
