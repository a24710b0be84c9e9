import type { Decision, DecisionCosts } from "../../domain.js";
import type { LabelledRiskGroup, RiskGroup } from "../../store/interfaces.js";
import { replayDecision } from "../verify/decide.js";
import type { DecisionModel } from "../verify/decisionModel.js";

type Counts = Record<Decision, number>;
type Mistakes = { falseAllow: number; falseChallenge: number; falseDeny: number };

export interface WhatIf {
  costs: DecisionCosts;
  events: number;
  /** Events the model decided: replayed under `costs`. */
  replayed: number;
  /** Events a tenant rule, an honoured clear or a degradation decided: they keep their decision. */
  kept: number;
  recorded: Counts;
  whatIf: Counts;
  labelled: number;
  expectedCost: { recorded: number; whatIf: number };
  mistakes: { recorded: Mistakes; whatIf: Mistakes };
}

const zero = (): Counts => ({ allow: 0, challenge: 0, deny: 0 });
const noMistakes = (): Mistakes => ({ falseAllow: 0, falseChallenge: 0, falseDeny: 0 });

/**
 * Replays the engine's decisions of a period under other weights: each model-decided event's recorded
 * risk goes through the same decision rule verify uses (decide.ts, replayDecision). Counts are the
 * engine's decisions (before log_only). Against the outcomes known, a labelled event's mistake is an
 * allowed abuser (falseAllow), or a challenged or denied event that was not abuse (falseChallenge,
 * falseDeny); the expected cost sums each mistake's weight under `costs`, for the recorded decisions
 * and for the replayed ones, so the two are compared on one scale.
 */
export function whatIf(
  groups: readonly RiskGroup[],
  labelled: readonly LabelledRiskGroup[],
  costs: DecisionCosts,
  model: DecisionModel,
): WhatIf {
  // The model's decisions replay; so does the scored re-verify that stands for an attempt whose first
  // verdict was degraded (decided by the clear it redeemed, with the engine's risk and decision).
  const replayable = (g: RiskGroup) =>
    g.risk !== null && (g.decidedBy === "model" || g.decidedBy === "clear");
  const replay = (g: RiskGroup): Decision =>
    replayable(g) && g.risk ? replayDecision(g.risk, g.actorType, costs, model) : g.decision;
  const recorded = zero();
  const replayedCounts = zero();
  let replayed = 0;
  let events = 0;
  for (const g of groups) {
    events += g.count;
    recorded[g.decision] += g.count;
    replayedCounts[replay(g)] += g.count;
    if (replayable(g)) replayed += g.count;
  }
  const mistakes = { recorded: noMistakes(), whatIf: noMistakes() };
  let labelledEvents = 0;
  const tally = (into: Mistakes, decision: Decision, abusive: boolean, n: number) => {
    if (abusive && decision === "allow") into.falseAllow += n;
    if (!abusive && decision === "challenge") into.falseChallenge += n;
    if (!abusive && decision === "deny") into.falseDeny += n;
  };
  for (const g of labelled) {
    labelledEvents += g.count;
    tally(mistakes.recorded, g.decision, g.abusive, g.count);
    tally(mistakes.whatIf, replay(g), g.abusive, g.count);
  }
  const cost = (m: Mistakes) =>
    Math.round(
      (m.falseAllow * costs.falseAllow +
        m.falseChallenge * costs.falseChallenge +
        m.falseDeny * costs.falseDeny) *
        1000,
    ) / 1000;
  return {
    costs,
    events,
    replayed,
    kept: events - replayed,
    recorded,
    whatIf: replayedCounts,
    labelled: labelledEvents,
    expectedCost: { recorded: cost(mistakes.recorded), whatIf: cost(mistakes.whatIf) },
    mistakes,
  };
}
