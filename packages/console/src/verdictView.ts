import { decimal, words } from "./format.js";

/**
 * How the event page presents who decided, the actor type and the confidence. Only a decision the
 * model made (decidedBy "model") has a confidence that describes it. A tenant rule's decision keeps
 * the model's reading of the actor, said to be the model's; an honoured clear and a degraded verdict
 * were never scored, so their stored actor type ("unknown") and confidence (1 or 0) are placeholders
 * the console does not present as findings.
 */
export type DecidedBy = "model" | "rule" | "clear" | "degraded";

const DECIDERS: Record<DecidedBy, string> = {
  model: "the model (scored with the costs below)",
  rule: "a tenant rule (a list or an action's setting; the first reasons name it)",
  clear: "an honoured challenge clear (not scored)",
  degraded: "the degraded fallback: a store outage, timeout or fault (not scored)",
};

const decider = (decidedBy: string): DecidedBy =>
  decidedBy in DECIDERS ? (decidedBy as DecidedBy) : "model";

export function decidedByText(decidedBy: string): string {
  return DECIDERS[decider(decidedBy)];
}

export function actorTypeText(decidedBy: string, actorType: string): string {
  switch (decider(decidedBy)) {
    case "model":
      return words(actorType);
    case "rule":
      return `${words(actorType)}, as the model read the evidence (the rule decided, not the model)`;
    default:
      return "not classified: nothing was scored";
  }
}

export function confidenceText(decidedBy: string, confidence: number): string {
  switch (decider(decidedBy)) {
    case "model":
      return decimal(confidence, 2);
    case "rule":
      return "none: a tenant rule decided, not the model";
    default:
      return "none: nothing was scored";
  }
}
