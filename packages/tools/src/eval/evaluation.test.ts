import fs from "node:fs";
import { DEFAULT_COSTS } from "@warden/server/dist/operations/verify/decide.js";
import { LOGIC_TEST_DEADLINE_MS } from "@warden/server/dist-testing/testing/harness.js";
import { describe, expect, it } from "vitest";
import {
  expectedCost,
  goals,
  PAGE_AUTOMATION_FINDINGS,
  runEvaluation,
  TLS_AUTOMATION_FINDINGS,
  TLS_FINDINGS,
} from "./runEval.js";
import { generateTraffic, JA4, makeOperators, TRUTH } from "./trafficGenerator.js";

/**
 * A small replay of the labeled traffic through the real HTTP API (npm run eval does the full one),
 * on the eval tenant's policy (page evidence required on the browser forms). Asserted here: what
 * must hold on every sample (no person denied, challenged beyond 2% or called automation, no page
 * finding that calls a person's page a program, every valid agent signature attributed and no forged
 * one) and the page-evidence rates (headless browsers and scripts not allowed). The TLS model: its
 * fingerprints are the verify signals' fixture's, no person's browser or app is called a program by
 * its handshake, a script's library is.
 */
describe("evaluation on generated traffic", () => {
  it("denies no person, attributes every valid agent signature and no forged one, stops the headless", async () => {
    // On the logic tests' deadline: what is asserted is the decisions, and one verify past 45 ms on a
    // busy shared machine answered the degraded challenge to a person once (a fresh-clone CI run).
    const rows = await runEvaluation({
      size: 300,
      seed: 7,
      costs: DEFAULT_COSTS,
      verifyDeadlineMs: LOGIC_TEST_DEADLINE_MS,
    });
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

    // TLS: people (behind an inspecting proxy at worst tls_unfamiliar) and apps are never a library's
    // handshake; apps' user agents claim no browser, so no TLS finding at all; scripts' libraries are.
    expect(
      people.filter((r) => r.findings.some((id) => TLS_AUTOMATION_FINDINGS.has(id))).map((r) => r.findings),
    ).toEqual([]);
    const apps = rows.filter((r) => r.cls === "native_app");
    expect(apps.filter((r) => r.findings.some((id) => TLS_FINDINGS.has(id)))).toEqual([]);
    expect(rows.some((r) => r.cls === "disposable_farm" && r.findings.includes("tls_library"))).toBe(true);
  }, 60_000);

  it("models TLS with the fixture's fingerprints, forwarded on about 70% of attempts whatever the class", () => {
    const fixture = JSON.parse(
      fs.readFileSync(
        new URL("../../../server/src/operations/verify/signals/fixtures/tls-ja4.json", import.meta.url),
        "utf8",
      ),
    ) as { measured: Record<string, string>; published: Record<string, string> };
    const known = new Set([...Object.values(fixture.measured), ...Object.values(fixture.published)]);
    expect(Object.values(JA4).filter((v) => !known.has(v))).toEqual([]);

    const operators = makeOperators();
    const attempts = generateTraffic({ seed: 3, size: 3000, operators, keyids: ["a", "b"] });
    const forwarded = attempts.filter((a) => a.tls !== undefined).length / attempts.length;
    expect(forwarded).toBeGreaterThan(0.65);
    expect(forwarded).toBeLessThan(0.75);
    // Every headless browser shakes hands as the Chromium it is.
    const headless = attempts.filter((a) => a.cls.startsWith("headless_") && a.tls !== undefined);
    expect(headless.length).toBeGreaterThan(0);
    expect(headless.every((a) => a.tls === JA4.chromium156)).toBe(true);
  });
});
