import { describe, expect, it } from "vitest";
import { DEFAULT_COSTS } from "../operations/verify/decide.js";
import { expectedCost, goals, runEvaluation } from "./runEval.js";

/**
 * A small replay of the labeled traffic through the real HTTP API (npm run eval does the full one).
 * Only the goals that must hold on every sample are asserted here: no person denied, every valid
 * agent signature attributed, no forged one; the rates are reported by npm run eval.
 */
describe("evaluation on generated traffic", () => {
  it("denies no person, attributes every valid agent signature and no forged one", async () => {
    const rows = await runEvaluation({ size: 300, seed: 7, costs: DEFAULT_COSTS });
    expect(rows.length).toBeGreaterThan(250);
    const byName = Object.fromEntries(goals(rows).map((g) => [g.name, g]));
    expect(byName["humans denied"]?.value).toBe(0);
    expect(byName["valid agent signatures → agent_principal"]?.value).toBe(1);
    expect(byName["forged signatures → agent_principal"]?.value).toBe(0);
    expect(rows.filter((r) => r.degraded)).toEqual([]);
    expect(expectedCost(rows, DEFAULT_COSTS)).toBeLessThan(0.2);
  }, 60_000);
});
