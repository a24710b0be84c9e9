import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Decision, DecisionCosts } from "../../domain.js";
import {
  type Assessment,
  confidenceFor,
  DEFAULT_COSTS,
  decide,
  type Evidence,
  expectedCosts,
  reasonsFor,
  resolveCosts,
} from "./decide.js";
import { DEFAULT_MODEL } from "./decisionModel.js";
import type { Finding } from "./signals/findings.js";

const SEVERITY = { allow: 0, challenge: 1, deny: 2 } as const;

const weight = fc.double({ min: 1e-3, max: 1e3, noNaN: true, noDefaultInfinity: true });
const costsArb = fc.record({ falseAllow: weight, falseChallenge: weight, falseDeny: weight });
const findingArb: fc.Arbitrary<Finding> = fc.record({
  id: fc.constantFrom("email_random" as const, "form_links" as const, "hosting_network" as const),
  logOdds: fc.double({ min: -3, max: 6, noNaN: true }),
  reason: fc.constant("some reason"),
  automation: fc.boolean(),
});
const evidenceArb: fc.Arbitrary<Evidence> = fc.record({
  findings: fc.array(findingArb, { maxLength: 5 }),
  channels: fc.integer({ min: 0, max: 5 }),
  browserConsistent: fc.boolean(),
  agent: fc.constantFrom("absent", "verified", "invalid", "unverified"),
  lists: fc.constant({ allow: [], deny: [] }),
  verifiedAgents: fc.constant("score" as const),
});
/** Evidence with nothing but what a test names. */
const ev = (e: Partial<Evidence>): Evidence => ({
  findings: [],
  channels: 0,
  browserConsistent: false,
  agent: "absent",
  lists: { allow: [], deny: [] },
  verifiedAgents: "score",
  ...e,
});
const factor = fc.double({ min: 1.01, max: 100, noNaN: true });
const DECISIONS = ["allow", "challenge", "deny"] as const;
/** The prices `d` and `o` are weighed at (docs/decisions.md §3): challenge against deny at the automated one when there is one. */
const pairPrices = (a: Assessment, d: Decision, o: Decision): Record<Decision, number> =>
  a.expectedCostAutomated && d !== o && [d, o].every((x) => x === "challenge" || x === "deny")
    ? a.expectedCostAutomated
    : a.expectedCost;

describe("decisionCosts", () => {
  it("defaults to 1, 1, 3", () => {
    expect(resolveCosts(undefined)).toEqual({ falseAllow: 1, falseChallenge: 1, falseDeny: 3 });
    expect(resolveCosts("nonsense")).toEqual(DEFAULT_COSTS);
  });

  it("replaces each invalid field by its own default and keeps the valid ones", () => {
    expect(resolveCosts({ falseAllow: 5, falseChallenge: -1, falseDeny: "2" })).toEqual({
      falseAllow: 5,
      falseChallenge: 1,
      falseDeny: 3,
    });
    expect(resolveCosts({ falseAllow: 0, falseChallenge: Number.POSITIVE_INFINITY, falseDeny: 0.5 })).toEqual(
      {
        falseAllow: 1,
        falseChallenge: 1,
        falseDeny: 0.5,
      },
    );
    expect(resolveCosts({ falseAllow: null, falseDeny: Number.NaN })).toEqual(DEFAULT_COSTS);
  });
});

describe("the cost-weighted three-way rule", () => {
  it("multiplying all three weights by one factor never changes the decision", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, factor, (ev, c, k) => {
        const scaled = {
          falseAllow: c.falseAllow * k,
          falseChallenge: c.falseChallenge * k,
          falseDeny: c.falseDeny * k,
        };
        expect(decide(ev, scaled, DEFAULT_MODEL).decision).toBe(decide(ev, c, DEFAULT_MODEL).decision);
      }),
      { numRuns: 3000 },
    );
  });

  const raising = (field: keyof DecisionCosts) => (c: DecisionCosts, k: number) => ({
    ...c,
    [field]: c[field] * k,
  });

  it("raising falseAllow never makes a decision more lenient", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, factor, (ev, c, k) => {
        const before = decide(ev, c, DEFAULT_MODEL).decision;
        const after = decide(ev, raising("falseAllow")(c, k), DEFAULT_MODEL).decision;
        expect(SEVERITY[after]).toBeGreaterThanOrEqual(SEVERITY[before]);
      }),
      { numRuns: 3000 },
    );
  });

  it("raising falseChallenge never allows fewer requests", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, factor, (ev, c, k) => {
        const before = decide(ev, c, DEFAULT_MODEL).decision;
        const after = decide(ev, raising("falseChallenge")(c, k), DEFAULT_MODEL).decision;
        if (before === "allow") expect(after).toBe("allow");
      }),
      { numRuns: 3000 },
    );
  });

  it("raising falseDeny never denies more", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, factor, (ev, c, k) => {
        const before = decide(ev, c, DEFAULT_MODEL).decision;
        const after = decide(ev, raising("falseDeny")(c, k), DEFAULT_MODEL).decision;
        if (after === "deny") expect(before).toBe("deny");
      }),
      { numRuns: 3000 },
    );
  });

  it("confidence is within [0, 1], and 0 for a decision that is not the cheapest", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, (ev, c) => {
        const a = decide(ev, c, DEFAULT_MODEL);
        for (const d of ["allow", "challenge", "deny"] as const) {
          const conf = confidenceFor(d, a.expectedCost);
          expect(conf).toBeGreaterThanOrEqual(0);
          expect(conf).toBeLessThanOrEqual(1);
          if (a.expectedCost[d] > Math.min(...Object.values(a.expectedCost))) expect(conf).toBe(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("an automated attempt the model leaves challenged: its confidence is the smaller of its margins over allow (general price) and deny (automated price), never the 0 of a decision that lost", () => {
    // About the quick start's curl: a script's user agent, risk 74% (54–88%). At the automated price
    // its challenge (0.96) costs more than allow (0.88), which says nothing about how clearly
    // challenge beat allow: that choice is made at the general price (0.48).
    const script = ev({
      channels: 2,
      findings: [{ id: "ua_automation", logOdds: 3.5, reason: "r", automation: true }],
    });
    const a = decide(script, DEFAULT_COSTS, DEFAULT_MODEL);
    expect(a).toMatchObject({ decision: "challenge", actorType: "agent_abusive" });
    const automated = a.expectedCostAutomated as Record<"allow" | "challenge" | "deny", number>;
    expect(automated.challenge).toBeGreaterThan(automated.allow);
    const overAllow = 1 - a.expectedCost.challenge / a.expectedCost.allow;
    const overDeny = 1 - automated.challenge / automated.deny;
    const conf = confidenceFor("challenge", a.expectedCost, automated);
    expect(conf).toBeGreaterThan(0);
    expect(conf).toBeCloseTo(Math.min(overAllow, overDeny), 3);
    expect(reasonsFor(a, DEFAULT_COSTS, 2).at(-1)).toMatch(/challenge had the lowest expected cost/);
  });

  it("with automation evidence, each pair is weighed at its price: confidence is the smallest margin, 0 where the decision is dearer than an alternative", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, (ev, c) => {
        const a = decide(ev, c, DEFAULT_MODEL);
        expect(a.expectedCostAutomated !== undefined).toBe(a.actorType === "agent_abusive");
        for (const d of DECISIONS) {
          const conf = confidenceFor(d, a.expectedCost, a.expectedCostAutomated);
          const margins = DECISIONS.filter((o) => o !== d).map((o) => {
            const prices = pairPrices(a, d, o);
            return 1 - prices[d] / prices[o];
          });
          expect(conf).toBeCloseTo(Math.max(0, Math.min(1, ...margins)), 3);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("the model's own decision has confidence above 0, except a challenge the weights alone may not turn into a deny, or a near tie", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, (ev, c) => {
        const a = decide(ev, c, DEFAULT_MODEL);
        if (a.rule) return;
        const conf = confidenceFor(a.decision, a.expectedCost, a.expectedCostAutomated, a.escalated === true);
        if (conf > 0) return;
        const vsDeny = pairPrices(a, "challenge", "deny");
        const guarded = a.decision === "challenge" && vsDeny.deny <= vsDeny.challenge;
        const alternatives =
          a.escalated === true ? ["challenge" as const] : DECISIONS.filter((d) => d !== a.decision);
        const nearTie = alternatives.some((o) => {
          const prices = pairPrices(a, a.decision, o);
          return prices[a.decision] >= prices[o] * 0.9995;
        });
        expect({ decision: a.decision, guarded, nearTie }).toMatchObject(
          guarded || nearTie ? {} : { guarded: true },
        );
      }),
      { numRuns: 3000 },
    );
  });

  it("an automated attempt the model denies instead of challenging: its confidence is its margin over that challenge, and the reason says why, even where allow costs less", () => {
    const automation = (logOdds: number): Finding => ({
      id: "ua_automation",
      logOdds,
      reason: "r",
      automation: true,
    });
    const a = decide(ev({ channels: 3, findings: [automation(4)] }), DEFAULT_COSTS, DEFAULT_MODEL);
    expect(a).toMatchObject({ decision: "deny", actorType: "agent_abusive", escalated: true });
    const automated = a.expectedCostAutomated as Record<"allow" | "challenge" | "deny", number>;
    // Allow is cheaper than deny here at both prices; it was ruled out by the challenge.
    expect(automated.allow).toBeLessThan(automated.deny);
    const conf = confidenceFor("deny", a.expectedCost, automated, true);
    expect(conf).toBeGreaterThan(0);
    expect(conf).toBeCloseTo(1 - automated.deny / automated.challenge, 3);
    expect(reasonsFor(a, DEFAULT_COSTS, 3).at(-1)).toMatch(
      /deny cost less than a challenge, which stops little automation/,
    );
  });

  it("reasons are never empty and list contributing signals most important first", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, (ev, c) => {
        const a = decide(ev, c, DEFAULT_MODEL);
        const reasons = reasonsFor(a, c, ev.channels);
        expect(reasons.length).toBeGreaterThan(0);
        for (const r of reasons) expect(r.length).toBeGreaterThan(0);
        const weights = a.findings.map((f) => Math.abs(f.logOdds));
        expect(weights).toEqual([...weights].sort((x, y) => y - x));
      }),
    );
  });

  it("uncertainty widens the challenge band: the same estimate allowed with rich evidence is challenged with thin", () => {
    const finding: Finding = { id: "email_random", logOdds: 2.1, reason: "x" };
    const rich = decide(
      ev({ findings: [finding], channels: 4, browserConsistent: false }),
      DEFAULT_COSTS,
      DEFAULT_MODEL,
    );
    const thin = decide(
      ev({ findings: [finding], channels: 0, browserConsistent: false }),
      DEFAULT_COSTS,
      DEFAULT_MODEL,
    );
    expect(rich.risk.estimate).toBeCloseTo(thin.risk.estimate);
    expect(rich.decision).toBe("allow");
    expect(thin.decision).toBe("challenge");
  });

  it("deny needs strong evidence under default weights", () => {
    const at = (logOdds: number) =>
      decide(
        ev({
          findings: [{ id: "email_random", logOdds, reason: "x" }],
          channels: 3,
          browserConsistent: false,
        }),
        DEFAULT_COSTS,
        DEFAULT_MODEL,
      );
    expect(at(3.5).decision).toBe("challenge");
    expect(at(7).decision).toBe("deny");
  });

  it("prices allow at the top of the band and deny at the bottom", () => {
    const cost = expectedCosts({ estimate: 0.5, low: 0.2, high: 0.8 }, DEFAULT_COSTS, 0.3);
    expect(cost.allow).toBeCloseTo(0.8);
    expect(cost.deny).toBeCloseTo(3 * 0.8);
    expect(cost.challenge).toBeCloseTo(0.5 + 0.15);
  });
});

describe("friction priced by the actor it faces", () => {
  const at = (logOdds: number, automation: boolean) =>
    decide(
      ev({ findings: [{ id: "email_random", logOdds, reason: "x", automation }], channels: 3 }),
      DEFAULT_COSTS,
      DEFAULT_MODEL,
    );

  it("the same risk is challenged without automation evidence and denied with it: a proof of work does not stop a program", () => {
    expect(at(5, false).decision).toBe("challenge");
    expect(at(5, true).decision).toBe("deny");
    expect(at(5, true).actorType).toBe("agent_abusive");
  });

  it("a weak challenge never turns a challenge into an allow, and thin automation evidence is still challenged", () => {
    for (const logOdds of [0.5, 1, 2, 3, 3.5]) {
      expect(at(logOdds, true).decision).toBe(
        at(logOdds, false).decision === "allow" ? "allow" : "challenge",
      );
    }
  });

  it("with automation evidence, a decision is never more lenient than without it", () => {
    fc.assert(
      fc.property(fc.double({ min: -3, max: 12, noNaN: true }), costsArb, (logOdds, costs) => {
        const evidence = (automation: boolean) =>
          ev({ findings: [{ id: "email_random", logOdds, reason: "x", automation }], channels: 3 });
        const plain = decide(evidence(false), costs, DEFAULT_MODEL).decision;
        const automated = decide(evidence(true), costs, DEFAULT_MODEL).decision;
        expect(SEVERITY[automated]).toBeGreaterThanOrEqual(SEVERITY[plain]);
      }),
    );
  });
});

describe("actor classification", () => {
  it("automation evidence makes agent_abusive; consistent low-risk browser evidence makes human; otherwise unknown", () => {
    const base = { channels: 2, browserConsistent: false };
    expect(
      decide(
        ev({ ...base, findings: [{ id: "ua_automation", logOdds: 3.5, reason: "r", automation: true }] }),
        DEFAULT_COSTS,
        DEFAULT_MODEL,
      ).actorType,
    ).toBe("agent_abusive");
    expect(
      decide(
        ev({
          channels: 2,
          browserConsistent: true,
          findings: [{ id: "browser_consistent", logOdds: -1, reason: "r" }],
        }),
        DEFAULT_COSTS,
        DEFAULT_MODEL,
      ).actorType,
    ).toBe("human");
    // Nothing wrong is not the same as human.
    expect(decide(ev({ ...base, findings: [] }), DEFAULT_COSTS, DEFAULT_MODEL).actorType).toBe("unknown");
    // Consistent browser headers but high risk (e.g. a disposable email) is not human.
    expect(
      decide(
        ev({
          channels: 3,
          browserConsistent: true,
          findings: [{ id: "email_disposable", logOdds: 3, reason: "r" }],
        }),
        DEFAULT_COSTS,
        DEFAULT_MODEL,
      ).actorType,
    ).toBe("unknown");
  });
});

describe("agents and tenant rules", () => {
  const automation: Finding = { id: "ua_automation", logOdds: 3.5, reason: "r", automation: true };

  it("agent_principal only for a verified signature; a forged one is agent_abusive", () => {
    expect(
      decide(ev({ agent: "verified", findings: [automation] }), DEFAULT_COSTS, DEFAULT_MODEL).actorType,
    ).toBe("agent_principal");
    expect(
      decide(ev({ agent: "invalid", findings: [automation] }), DEFAULT_COSTS, DEFAULT_MODEL).actorType,
    ).toBe("agent_abusive");
    expect(decide(ev({ agent: "unverified" }), DEFAULT_COSTS, DEFAULT_MODEL).actorType).toBe("unknown");
  });

  it("a deny-list hit denies and says so, whatever the model thinks", () => {
    const a = decide(
      ev({
        channels: 4,
        browserConsistent: true,
        lists: { allow: ["network 10.0.0.0/8"], deny: ["email domain x.test"] },
      }),
      DEFAULT_COSTS,
      DEFAULT_MODEL,
    );
    expect(a.decision).toBe("deny");
    expect(reasonsFor(a, DEFAULT_COSTS, 4)[0]).toBe("The tenant's deny list names email domain x.test.");
  });

  it("an allow-list hit allows, except a forged agent signature", () => {
    const lists = { allow: ["network 203.0.113.0/24"], deny: [] };
    expect(decide(ev({ lists, findings: [automation] }), DEFAULT_COSTS, DEFAULT_MODEL).decision).toBe(
      "allow",
    );
    const forged = decide(
      ev({ lists, agent: "invalid", findings: [{ ...automation, logOdds: 5 }] }),
      DEFAULT_COSTS,
      DEFAULT_MODEL,
    );
    expect(forged.decision).not.toBe("allow");
    expect(forged.rule).toBeUndefined();
  });

  it("verified agents get the action's rule; 'score' leaves the model in charge", () => {
    for (const rule of ["allow", "challenge", "deny"] as const) {
      expect(
        decide(ev({ agent: "verified", verifiedAgents: rule }), DEFAULT_COSTS, DEFAULT_MODEL).decision,
      ).toBe(rule);
    }
    const scored = decide(
      ev({ agent: "unverified", verifiedAgents: "allow", channels: 2 }),
      DEFAULT_COSTS,
      DEFAULT_MODEL,
    );
    expect(scored.rule).toBeUndefined();
  });
});

describe("a person is never denied by the weights alone", () => {
  it("falseAllow 250 on a consistent browser at low risk: challenged at worst, still human", () => {
    const person = ev({ browserConsistent: true, channels: 3 });
    const a = decide(person, { falseAllow: 250, falseChallenge: 1, falseDeny: 3 }, DEFAULT_MODEL);
    expect(a.actorType).toBe("human");
    expect(a.expectedCost.deny).toBeLessThan(a.expectedCost.challenge);
    expect(a.decision).toBe("challenge");
  });

  it("for any evidence and weights, the model's deny never goes with actorType human; a tenant deny rule still denies", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, (e, costs) => {
        const a = decide(e, costs, DEFAULT_MODEL);
        expect(a.decision === "deny" && a.actorType === "human").toBe(false);
      }),
    );
    const listed = ev({
      browserConsistent: true,
      channels: 3,
      lists: { allow: [], deny: ["network 81.2.3.0/24"] },
    });
    expect(decide(listed, DEFAULT_COSTS, DEFAULT_MODEL)).toMatchObject({
      decision: "deny",
      actorType: "human",
    });
  });

  it("falseAllow 250 with no evidence of abuse (nothing raised the risk above the prior): challenged, not denied", () => {
    const bare = ev({ channels: 1 });
    const a = decide(bare, { falseAllow: 250, falseChallenge: 1, falseDeny: 3 }, DEFAULT_MODEL);
    expect(a.actorType).toBe("unknown");
    expect(a.expectedCost.deny).toBeLessThan(a.expectedCost.challenge);
    expect(a.decision).toBe("challenge");
  });

  it("for any evidence and weights, the model denies only where a finding raised the risk", () => {
    fc.assert(
      fc.property(evidenceArb, costsArb, (e, costs) => {
        const a = decide(e, costs, DEFAULT_MODEL);
        if (a.decision === "deny" && a.rule === undefined) {
          expect(e.findings.some((f) => f.logOdds > 0)).toBe(true);
        }
      }),
    );
    // The same weights deny once the evidence shows abuse.
    const hosting = ev({
      channels: 2,
      findings: [{ id: "hosting_network", logOdds: 1.5, reason: "hosting" }],
    });
    expect(
      decide(hosting, { falseAllow: 250, falseChallenge: 1, falseDeny: 3 }, DEFAULT_MODEL).decision,
    ).toBe("deny");
  });
});
