import type { ActorType, Decision, DecisionCosts } from "../../domain.js";
import type { VerifiedAgentRule } from "../../policy/tenantPolicy.js";
import type { DecisionModel } from "./decisionModel.js";
import { type ReasonCode, type ReasonDetail, reason } from "./reasonCodes.js";
import type { Finding } from "./signals/findings.js";

export const DEFAULT_COSTS: Readonly<DecisionCosts> = Object.freeze({
  falseAllow: 1,
  falseChallenge: 1,
  falseDeny: 3,
});

const COST_FIELDS = ["falseAllow", "falseChallenge", "falseDeny"] as const;

/**
 * Each field that is missing or not a finite positive number falls back to its own default: the
 * tenant's (its policy's decisionCosts for the action), else the built-in 1, 1, 3.
 */
export function resolveCosts(input: unknown, defaults: Partial<DecisionCosts> = {}): DecisionCosts {
  const given = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const out = { ...DEFAULT_COSTS, ...defaults };
  for (const field of COST_FIELDS) {
    const v = given[field];
    if (typeof v === "number" && Number.isFinite(v) && v > 0) out[field] = v;
  }
  return out;
}

export interface Evidence {
  findings: readonly Finding[];
  /** How many evidence channels the request carried (user agent, headers, email, network, form). */
  channels: number;
  /** A browser user agent with every header that browser sends. */
  browserConsistent: boolean;
  /** The Web Bot Auth outcome ("absent" without a signature). */
  agent: "absent" | "verified" | "invalid" | "unverified";
  /** Tenant list entries the request matched, as display text. */
  lists: { allow: readonly string[]; deny: readonly string[] };
  /** The tenant's rule for verified agents on this action. */
  verifiedAgents: VerifiedAgentRule;
}

export interface Risk {
  estimate: number;
  low: number;
  high: number;
}

export interface Assessment {
  decision: Decision;
  /** Set when a tenant rule (a list or a per-action setting), not the model, made the decision. */
  rule: string | undefined;
  /** The rule's code in the reason catalogue, with `rule`. */
  ruleCode?: ReasonCode;
  actorType: ActorType;
  risk: Risk;
  expectedCost: Record<Decision, number>;
  /**
   * An agent_abusive attempt: the costs with its challenge priced for automation
   * (`challengeLeakAutomated`), at which challenge and deny are weighed against each other.
   * `expectedCost` holds the general prices, at which every other pair is weighed.
   */
  expectedCostAutomated?: Record<Decision, number>;
  /**
   * The model's challenge of an agent_abusive attempt turned into a deny, its challenge being worth
   * less than refusing it: allow was ruled out by the challenge, so the deny was weighed against the
   * challenge alone.
   */
  escalated?: true;
  /** Findings that contributed, most important first. */
  findings: Finding[];
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
const logit = (p: number): number => Math.log(p / (1 - p));

/** The abuse estimate with its band: evidence adds log-odds to the prior; thin evidence widens the band. */
export function estimateRisk(evidence: Evidence, model: DecisionModel): Risk {
  const score = logit(model.prior) + evidence.findings.reduce((sum, f) => sum + f.logOdds, 0);
  const spreads = model.spreadByChannels;
  const spread = spreads[Math.min(evidence.channels, spreads.length - 1)] ?? 0;
  return { estimate: sigmoid(score), low: sigmoid(score - spread), high: sigmoid(score + spread) };
}

/**
 * Expected cost of each decision (docs/decisions.md):
 *   allow     = falseAllow · p_high                               (an abuser let through)
 *   challenge = falseChallenge · (1 − p) + falseAllow · leak · p   (a person slowed, or an abuser who solves it)
 *   deny      = falseDeny · (1 − p_low)                            (a person refused)
 * Allow is priced at the top of the band and deny at the bottom, so uncertainty widens the challenge
 * band and deny needs strong evidence. Every term is linear in one weight, so scaling all three
 * weights never changes the choice.
 */
export function expectedCosts(risk: Risk, costs: DecisionCosts, leak: number): Record<Decision, number> {
  return {
    allow: costs.falseAllow * risk.high,
    challenge: costs.falseChallenge * (1 - risk.estimate) + costs.falseAllow * leak * risk.estimate,
    deny: costs.falseDeny * (1 - risk.low),
  };
}

/** Ties go to challenge, then allow: a tie is never settled by refusing someone. */
const TIE_ORDER: readonly Decision[] = ["challenge", "allow", "deny"];

export function cheapest(cost: Record<Decision, number>): Decision {
  let best: Decision = "challenge";
  for (const d of TIE_ORDER) if (cost[d] < cost[best]) best = d;
  return best;
}

/**
 * Confidence in `decision`: how much cheaper it is than the best alternative, 1 − cost / cheapest other,
 * in [0, 1]. A decision that is not the cheapest (log_only's allow over a would-be challenge) gets 0.
 * With `automated` (an agent_abusive attempt), challenge and deny are weighed against each other at
 * those prices, as the model weighs them, and every other pair at `cost`'s; the model's `escalated`
 * deny, against the challenge it replaced only.
 */
export function confidenceFor(
  decision: Decision,
  cost: Record<Decision, number>,
  automated?: Record<Decision, number>,
  escalated = false,
): number {
  const alternatives: readonly Decision[] =
    escalated && decision === "deny" ? ["challenge"] : TIE_ORDER.filter((other) => other !== decision);
  const margins = alternatives.map((other) => {
    const challengeAgainstDeny =
      (decision === "challenge" && other === "deny") || (decision === "deny" && other === "challenge");
    const prices = automated && challengeAgainstDeny ? automated : cost;
    return prices[other] > 0 ? 1 - prices[decision] / prices[other] : 0;
  });
  const value = Math.min(...margins);
  return Math.round(Math.min(1, Math.max(0, value)) * 1000) / 1000;
}

/**
 * agent_principal only for a verified agent signature; agent_abusive for automation evidence without
 * one (forged signatures included); human only when the browser evidence is consistent and the risk
 * low; unknown otherwise: a request is never called human just because nothing was wrong.
 */
function classify(evidence: Evidence, risk: Risk, model: DecisionModel): ActorType {
  if (evidence.agent === "verified") return "agent_principal";
  if (evidence.findings.some((f) => f.automation)) return "agent_abusive";
  if (evidence.browserConsistent && risk.estimate < model.humanMaxRisk) return "human";
  return "unknown";
}

/**
 * Tenant rules, which take precedence over the model in this order: a deny-list hit denies; an
 * allow-list hit allows, except a forged agent signature; a verified agent gets the action's rule.
 */
function tenantRule(evidence: Evidence): { decision: Decision; rule: string; code: ReasonCode } | undefined {
  const [deny] = evidence.lists.deny;
  if (deny)
    return { decision: "deny", rule: `The tenant's deny list names ${deny}.`, code: "tenant_deny_list" };
  const [allow] = evidence.lists.allow;
  if (allow && evidence.agent !== "invalid")
    return { decision: "allow", rule: `The tenant's allow list names ${allow}.`, code: "tenant_allow_list" };
  if (evidence.agent === "verified" && evidence.verifiedAgents !== "score") {
    return {
      decision: evidence.verifiedAgents,
      rule: `The tenant's policy answers ${evidence.verifiedAgents} to verified agents for this action.`,
      code: "tenant_verified_agents",
    };
  }
  return undefined;
}

/**
 * The cheapest decision, except that the weights alone never refuse without evidence: an attempt
 * classified human (consistent browser, low risk), or one where no finding raised the risk above the
 * prior, is at worst challenged, however high falseAllow is (docs/api.md#how-verify-decides: a higher falseAllow challenges
 * earlier; deny is for abuse the evidence shows). Only a tenant rule denies such an attempt.
 */
function cheapestAllowed(cost: Record<Decision, number>, actorType: ActorType, raised: boolean): Decision {
  const best = cheapest(cost);
  if (best !== "deny") return best;
  if (actorType !== "human" && raised) return best;
  return cost.allow < cost.challenge ? "allow" : "challenge";
}

/**
 * The model's decision and the costs it weighed. A challenge is priced by how many abusers it lets
 * through: `challengeLeak` in general, `challengeLeakAutomated` for an attempt with automation
 * evidence (agent_abusive), whom a proof of work does not stop. The second price only moves the
 * boundary between challenge and deny: an attempt the general price would challenge is denied when
 * its challenge is worth less than refusing it; nothing is allowed because its challenge is weak.
 */
function modelDecision(
  risk: Risk,
  costs: DecisionCosts,
  model: DecisionModel,
  actorType: ActorType,
  raised: boolean,
): {
  decision: Decision;
  cost: Record<Decision, number>;
  automated?: Record<Decision, number>;
  escalated?: true;
} {
  const general = expectedCosts(risk, costs, model.challengeLeak);
  const decision = cheapestAllowed(general, actorType, raised);
  if (actorType !== "agent_abusive") return { decision, cost: general };
  const automated = expectedCosts(risk, costs, model.challengeLeakAutomated);
  if (decision === "challenge" && raised && automated.deny < automated.challenge) {
    return { decision: "deny", cost: general, automated, escalated: true };
  }
  return { decision, cost: general, automated };
}

/** Whether a finding raised the risk above the prior (what the model needs before it may deny). */
export const raisesRisk = (findings: readonly Finding[]): boolean => findings.some((f) => f.logOdds > 0);

/**
 * The model's decision for a recorded risk under other weights: what verify would have decided for
 * the same evidence (the console's what-if). Tenant rules are not replayed: their decisions stand.
 */
export function replayDecision(
  risk: Risk & { raised: boolean },
  actorType: ActorType,
  costs: DecisionCosts,
  model: DecisionModel,
): Decision {
  return modelDecision(risk, costs, model, actorType, risk.raised).decision;
}

/** The pure decision: evidence, costs and the decision model in; decision, actor type and its grounds out. */
export function decide(evidence: Evidence, costs: DecisionCosts, model: DecisionModel): Assessment {
  const risk = estimateRisk(evidence, model);
  const rule = tenantRule(evidence);
  const actorType = classify(evidence, risk, model);
  const weighed = modelDecision(risk, costs, model, actorType, raisesRisk(evidence.findings));
  return {
    decision: rule?.decision ?? weighed.decision,
    rule: rule?.rule,
    ...(rule ? { ruleCode: rule.code } : {}),
    actorType,
    risk,
    expectedCost: weighed.cost,
    ...(weighed.automated ? { expectedCostAutomated: weighed.automated } : {}),
    // Only when the model's deny is the decision (a tenant rule's deny was not weighed so).
    ...(weighed.escalated && !rule ? { escalated: true as const } : {}),
    findings: [...evidence.findings].sort((a, b) => Math.abs(b.logOdds) - Math.abs(a.logOdds)),
  };
}

const pct = (p: number): string => `${Math.round(p * 100)}%`;

/** Display sentences, most important first; never empty. Not a machine interface (docs/api.md#reason-codes). */
export function reasonsFor(a: Assessment, costs: DecisionCosts, channels: number): string[] {
  return reasonDetailsFor(a, costs, channels).map((r) => r.message);
}

/** The same reasons with their codes and categories (reasonCodes.ts): the verdict's reasonDetails. */
export function reasonDetailsFor(a: Assessment, costs: DecisionCosts, channels: number): ReasonDetail[] {
  const reasons = a.findings.map((f) => reason(f.id, f.reason));
  if (a.rule) reasons.unshift(reason(a.ruleCode ?? "tenant_deny_list", a.rule));
  if (reasons.length === 0) {
    reasons.push(
      channels === 0
        ? reason("no_evidence", "The attempt carried almost no evidence to assess.")
        : reason("no_risk_signal", "No risk signal was found in the attempt."),
    );
  }
  const weights = `weights falseAllow ${costs.falseAllow}, falseChallenge ${costs.falseChallenge}, falseDeny ${costs.falseDeny}`;
  const verdictLine = a.rule
    ? `the tenant's rule decided ${a.decision}`
    : a.escalated
      ? `deny cost less than a challenge, which stops little automation, with ${weights}`
      : `${a.decision} had the lowest expected cost with ${weights}`;
  reasons.push(
    reason(
      "risk_estimate",
      `Estimated abuse risk ${pct(a.risk.estimate)} (range ${pct(a.risk.low)}–${pct(a.risk.high)}); ${verdictLine}.`,
    ),
  );
  return reasons;
}
