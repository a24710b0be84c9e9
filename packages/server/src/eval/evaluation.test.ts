import { describe, expect, it } from "vitest";
import { DEFAULT_COSTS } from "../operations/verify/decide.js";
import { expectedCost, goals, PAGE_AUTOMATION_FINDINGS, runEvaluation } from "./runEval.js";
import { TRUTH } from "./trafficGenerator.js";

/**
 * A small replay of the labeled traffic through the real HTTP API (npm run eval does the full one),
 * on the eval tenant's policy (page evidence required on the browser forms). Asserted here: what
 * must hold on every sample (no person denied, challenged beyond 2% or called automation, no page
 * finding that calls a person's page a program, every valid agent signature attributed and no forged
 * one) and the page-evidence rates (headless browsers and scripts not allowed).
 */
describe("evaluation on generated traffic", () => {
  it("denies no person, attributes every valid agent signature and no forged one, stops the headless", async () => {
    const rows = await runEvaluation({ size: 300, seed: 7, costs: DEFAULT_COSTS });
    expect(rows.length).toBeGreaterThan(250);
    const byName = Object.fromEntries(goals(rows).map((g) => [g.name, g]));
    expect(byName["humans denied"]?.value).toBe(0);
    expect(byName["humans challenged"]?.met).toBe(true);
    expect(byName["humans labelled agent_abusive"]?.value).toBe(0);
    expect(byName["valid agent signatures → agent_principal"]?.value).toBe(1);
    expect(byName["forged signatures → agent_principal"]?.value).toBe(0);
    expect(byName["scripted abuse challenged or denied"]?.met).toBe(true);
    expect(byName["headless browsers posing as people not allowed"]?.met).toBe(true);
    expect(rows.filter((r) => r.degraded)).toEqual([]);
    expect(expectedCost(rows, DEFAULT_COSTS)).toBeLessThan(0.2);

    // People's pages (and native apps, which have none, on their own actions) raise no automation finding.
    const people = rows.filter((r) => TRUTH[r.cls] === "human");
    expect(people.length).toBeGreaterThan(100);
    expect(
      people.filter((r) => r.findings.some((id) => PAGE_AUTOMATION_FINDINGS.has(id))).map((r) => r.findings),
    ).toEqual([]);
    // The policy applies: a form sent without its page is a program; a headless browser's tool fills fast.
    const pageless = rows.filter((r) => r.cls === "disposable_farm" || r.cls === "multi_account");
    expect(pageless.length).toBeGreaterThan(0);
    expect(pageless.every((r) => r.findings.includes("page_evidence_missing"))).toBe(true);
    const headless = rows.filter((r) => r.cls === "headless_ua_spoofed" || r.cls === "headless_stealth");
    expect(headless.length).toBeGreaterThan(0);
    expect(headless.every((r) => r.findings.includes("page_submitted_fast"))).toBe(true);
  }, 60_000);
});
