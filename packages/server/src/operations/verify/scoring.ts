import type { TenantPolicy } from "../../policy/tenantPolicy.js";
import { type Assessment, decide, type Evidence } from "./decide.js";
import type { DecisionModel } from "./decisionModel.js";
import { observe, type RequestEvidence } from "./evidence.js";
import type { Finding } from "./signals/findings.js";
import { mergeLimits, type VelocityCheck, velocityChecks } from "./signals/velocity.js";
import type { VerifyCall } from "./verdict.js";
import type { VerifyDeps } from "./verifyDeps.js";

/**
 * Verify's scoring: what the request shows (evidence.ts, no store), the velocity counters it hits,
 * and the engine's decision on both (decide.ts). The counters are hit by verify.ts, in the same store
 * call as the key's rate limit (rateLimit.ts).
 */

/** The request's evidence, read under the decision model and the tenant's rules. */
export function observeCall(deps: VerifyDeps, call: VerifyCall, policy: TenantPolicy): RequestEvidence {
  return observe(call.req, {
    model: deps.model,
    policy,
    hosting: deps.hosting,
    agentKeys: deps.agentKeys,
    nowSeconds: Math.floor(call.now / 1000),
    nowMs: call.now,
    tenantId: call.caller.tenant.id,
    pageKey: (kid) => deps.keyring.pageKey(kid),
  });
}

/** The velocity counters the attempt hits, under the built-in limits with the tenant's over them. */
export function velocityChecksOf(
  model: DecisionModel,
  call: VerifyCall,
  policy: TenantPolicy,
  observed: RequestEvidence,
): VelocityCheck[] {
  return velocityChecks(
    call.caller.tenant.id,
    call.req.action,
    observed.velocityKeys,
    mergeLimits(model.velocity, policy.velocity),
  );
}

/**
 * The worst assessment the observation leaves open while the velocity counters cannot be read (a
 * degraded verdict): every counter the attempt would hit over its limit, each kind at its cap, and
 * its shape or environment surging at the campaign cap, or, for an environment counted per network,
 * as one machine's browsers (automation evidence, signals/campaign.ts). Velocity findings only add
 * risk, and no other is automation evidence, so no scored verdict of the same request, whatever its
 * counts, has a higher risk estimate or another automation class.
 */
export function worstCaseAssessment(
  model: DecisionModel,
  call: VerifyCall,
  policy: TenantPolicy,
  observed: RequestEvidence,
): Assessment {
  const kinds = new Set(velocityChecksOf(model, call, policy, observed).map((c) => c.key.kind));
  const velocity = [...kinds].map(
    (kind): Finding => ({
      id: `velocity_${kind}`,
      logOdds: Math.max(0, model.weights.velocity[kind].cap),
      reason: `${kind} velocity at its cap`,
    }),
  );
  if (observed.campaignKeys.length > 0) {
    // An environment counted per network may be one machine's browsers: automation evidence.
    const machine =
      observed.network !== undefined && observed.campaignKeys.some((k) => k.kind === "environment");
    const { cap, machine: machineWeight } = model.weights.campaign;
    velocity.push({
      id: "campaign_surge",
      logOdds: Math.max(0, cap, machine ? machineWeight : 0),
      reason: "campaign surge at its cap",
      ...(machine && { automation: true }),
    });
  }
  return assess(model, call, policy, observed, velocity);
}

/** The engine's decision on the observation, with `velocity` findings beside its own, at the call's costs. */
export function assess(
  model: DecisionModel,
  call: VerifyCall,
  policy: TenantPolicy,
  observed: RequestEvidence,
  velocity: readonly Finding[],
): Assessment {
  const evidence: Evidence = {
    findings: velocity.length === 0 ? observed.findings : [...observed.findings, ...velocity],
    channels: observed.channels,
    browserConsistent: observed.browserConsistent,
    agent: observed.agent.outcome,
    lists: observed.lists,
    verifiedAgents: policy.verifiedAgents(call.req.action),
  };
  return decide(evidence, call.costs, model);
}
