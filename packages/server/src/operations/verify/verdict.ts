import type {
  Decider,
  DecisionCosts,
  EnforcementMode,
  EventRecord,
  RecordedRisk,
  WorstCase,
} from "../../domain.js";
import { timeOrderedId } from "../../lib/crypto.js";
import type { TenantPolicy } from "../../policy/tenantPolicy.js";
import type { ChallengeRecord } from "../../store/interfaces.js";
import type { VerdictClaims } from "../../tokens/verdictToken.js";
import type { Caller } from "../caller.js";
import { attemptFingerprint } from "./attempt.js";
import { CLEARED_REASON, clearedAfterDegradedReason } from "./clearRedemption.js";
import { type Assessment, confidenceFor, raisesRisk, reasonDetailsFor, resolveCosts } from "./decide.js";
import { ENGINE_VERSION } from "./decisionModel.js";
import { enforcementModeFor } from "./enforcement.js";
import type { RequestEvidence } from "./evidence.js";
import type { Idempotency } from "./idempotency.js";
import { principalFor } from "./principal.js";
import { type ReasonDetail, reason } from "./reasonCodes.js";
import type { Verdict, VerifyRequest } from "./schema.js";

/**
 * Every verdict verify answers is built here, from its call and one VerdictOptions: the scored one
 * (the model's decision, or a tenant rule's such as a deny-list hit), the cleared one (a scored challenge's clear, scoring
 * skipped) and the degraded one. Its event comes from the same two, so every event records the
 * call's costs, enforcement mode and policy version the same way.
 */

/**
 * One verify call as its phases and its verdict see it, made once the tenant's policy is in hand (or,
 * for a degraded verdict, as far as it was loaded). Its decision costs are resolved here and nowhere
 * else, so that the decision and every kind of verdict stand under the same ones.
 */
export interface VerifyCall {
  caller: Caller;
  req: VerifyRequest;
  idem: Idempotency | undefined;
  now: number;
  /**
   * The request's decisionCosts over the action's and the tenant's, over the built-in 1, 1, 3; each
   * weight on its own (docs/api.md, tenant policy).
   */
  costs: DecisionCosts;
  mode: EnforcementMode;
  /** The tenant policy's version, or "unavailable" for a degraded verdict given before it was loaded. */
  policyVersion: string;
}

export function verifyCall(
  caller: Caller,
  req: VerifyRequest,
  idem: Idempotency | undefined,
  policy: TenantPolicy | undefined,
  now: number,
): VerifyCall {
  return {
    caller,
    req,
    idem,
    now,
    costs: resolveCosts(req.context?.decisionCosts, policy?.decisionCosts(req.action)),
    mode: enforcementModeFor(caller, req.context?.logOnly),
    policyVersion: policy?.version ?? "unavailable",
  };
}

/** What made the verdict, and what it says beyond its call. */
export type VerdictOptions =
  /**
   * The engine's decision on the scored attempt, answered as allow under log_only or when `redeems`
   * (the clear of a challenge issued on a degraded verdict) is honoured with it.
   */
  | {
      kind: "scored";
      assessment: Assessment;
      observed: RequestEvidence;
      /** Why the clear this re-verify carried was not used, when it carried one. */
      clearNote: string | undefined;
      redeems: ChallengeRecord | undefined;
      /**
       * The challenge this re-verify carried, when it was found to be this attempt's (same session
       * and attempt): its event names it, so the console shows which challenge a refused clear was.
       */
      carried: string | undefined;
    }
  /**
   * A scored challenge's clear, honoured: allow, scoring skipped (docs/api.md#post-v1challenge-and-re-verify).
   * `recorded` is the request's protected evidence: its email hash and network are kept, so that a
   * search by either finds this event with the rest of its attempt.
   */
  | { kind: "cleared"; challenge: ChallengeRecord; recorded: Record<string, unknown> }
  /** Checks that could not complete in time: the precautionary challenge. */
  | { kind: "degraded"; eventId: string; unscored: UnscoredReading };

/**
 * What a degraded verdict read of its request without the store (degraded.ts): the protected values
 * its event records as a scored one's does (so that it is found, and erased, by email hash and
 * network), and the worst case its stateless evidence leaves open, when that evidence could be read
 * under the tenant's policy.
 */
export interface UnscoredReading {
  recorded: Record<string, unknown>;
  worstCase: WorstCase | undefined;
}

/** A verdict before its token is signed. */
export type UnsignedVerdict = Omit<Verdict, "verdictToken">;

export const DEGRADED_REASON =
  "Warden could not complete its checks in time (store outage, timeout or internal error); this is a precautionary challenge.";

/** The principal of a verdict that resolved nobody (docs/api.md#agent-identity-web-bot-auth: empty strings and an empty list mean unknown). */
export const NO_PRINCIPAL: Verdict["principal"] = Object.freeze({
  resolved: false,
  operator: "",
  onBehalfOf: "",
  identityBasis: [],
}) as Verdict["principal"];

export function verdictOf(call: VerifyCall, o: VerdictOptions): UnsignedVerdict {
  if (o.kind === "degraded") {
    return {
      decision: "challenge",
      actorType: "unknown",
      confidence: 0,
      reasons: [DEGRADED_REASON],
      reasonDetails: [reason("degraded", DEGRADED_REASON)],
      principal: NO_PRINCIPAL,
      eventId: o.eventId,
      degraded: true,
      enforcementMode: call.mode,
    };
  }
  if (o.kind === "cleared") {
    return {
      decision: "allow",
      actorType: "unknown",
      // Scoring was skipped: the honoured clear decided, and nothing weighed against it.
      confidence: 1,
      reasons: [CLEARED_REASON],
      reasonDetails: [reason("challenge_cleared", CLEARED_REASON)],
      principal: NO_PRINCIPAL,
      eventId: timeOrderedId("evt", call.now),
      degraded: false,
      enforcementMode: call.mode,
      challengeCleared: true,
    };
  }
  const { assessment, redeems } = o;
  const decision = call.mode === "log_only" || redeems ? "allow" : assessment.decision;
  const details = scoredReasons(call, o);
  const verdict: UnsignedVerdict = {
    decision,
    actorType: assessment.actorType,
    // `confidence`, "model confidence for the returned decision" (docs/api.md#post-v1verify): the model's margin for it, also when
    // a tenant rule or log_only chose it (0 where another decision cost the model less).
    confidence: confidenceFor(
      decision,
      assessment.expectedCost,
      assessment.expectedCostAutomated,
      assessment.escalated === true,
    ),
    reasons: details.map((d) => d.message),
    reasonDetails: details,
    principal: principalFor(o.observed.agent, o.observed.businessDomain),
    eventId: timeOrderedId("evt", call.now),
    degraded: false,
    enforcementMode: call.mode,
  };
  if (redeems) verdict.challengeCleared = true;
  return verdict;
}

/** The assessment's reasons, after what overruled or qualified it: log_only, a clear, a clear refused. */
function scoredReasons(call: VerifyCall, o: Extract<VerdictOptions, { kind: "scored" }>): ReasonDetail[] {
  const { assessment } = o;
  const details = reasonDetailsFor(assessment, call.costs, o.observed.channels);
  if (o.clearNote) details.unshift(reason("clear_not_honoured", o.clearNote));
  if (o.redeems) {
    details.unshift(
      reason("challenge_cleared_after_degraded", clearedAfterDegradedReason(assessment.decision)),
    );
  }
  if (call.mode === "log_only") {
    details.unshift(
      reason(
        "log_only",
        `Log-only mode: observed, not enforced; the decision would have been ${assessment.decision}.`,
      ),
    );
  }
  return details;
}

/** The event `verdict` is recorded as: protected signal values only, never raw email or IP. */
export function eventOf(call: VerifyCall, verdict: UnsignedVerdict, o: VerdictOptions): EventRecord {
  const { caller, req } = call;
  let wouldBe = verdict.decision;
  let decidedBy: Decider;
  let risk: RecordedRisk | null = null;
  let signals: Record<string, unknown>;
  if (o.kind === "scored") {
    const { assessment } = o;
    wouldBe = assessment.decision;
    decidedBy = o.redeems ? "clear" : assessment.rule ? "rule" : "model";
    const scoredRisk = {
      estimate: round(assessment.risk.estimate),
      low: round(assessment.risk.low),
      high: round(assessment.risk.high),
    };
    risk = { ...scoredRisk, raised: raisesRisk(assessment.findings) };
    signals = {
      ...o.observed.recorded,
      findings: assessment.findings.map((f) => ({ id: f.id, logOdds: round(f.logOdds) })),
      risk: scoredRisk,
      ...((o.redeems?.id ?? o.carried) !== undefined && { challengeId: o.redeems?.id ?? o.carried }),
      // The attribution answered, so an event shows it later (GET /v1/events/{eventId}).
      principal: verdict.principal,
    };
  } else if (o.kind === "cleared") {
    decidedBy = "clear";
    signals = {
      challengeId: o.challenge.id,
      emailSha256: o.recorded.emailSha256 ?? null,
      ipNetwork: o.recorded.ipNetwork ?? null,
      principal: verdict.principal,
    };
  } else {
    decidedBy = "degraded";
    const { recorded, worstCase } = o.unscored;
    signals = { ...recorded, degraded: true, ...(worstCase && { worstCase }), principal: verdict.principal };
  }
  return {
    id: verdict.eventId,
    tenantId: caller.tenant.id,
    keyId: caller.key.id,
    createdAt: call.now,
    action: req.action,
    surface: req.surface ?? null,
    session: req.session ?? null,
    decision: verdict.decision,
    wouldBeDecision: wouldBe,
    actorType: verdict.actorType,
    confidence: verdict.confidence,
    reasons: verdict.reasons,
    degraded: verdict.degraded,
    enforcementMode: verdict.enforcementMode,
    costs: call.costs,
    signals,
    engineVersion: ENGINE_VERSION,
    policyVersion: call.policyVersion,
    attempt: attemptFingerprint(req.action, req.subject),
    decidedBy,
    risk,
    // What the console searches by, from the signals already protected (evidence.ts, `recorded`).
    emailHash: typeof signals.emailSha256 === "string" ? signals.emailSha256 : null,
    network: typeof signals.ipNetwork === "string" ? signals.ipNetwork : null,
    reasonCodes: [...new Set(verdict.reasonDetails.map((r) => r.code))],
  };
}

/** The receipt's claims: the verdict's own decision fields (tokens/verdictToken.ts). */
export function claimsOf(call: VerifyCall, verdict: UnsignedVerdict): VerdictClaims {
  const claims: VerdictClaims = {
    tenantId: call.caller.tenant.id,
    eventId: verdict.eventId,
    session: call.req.session ?? null,
    action: call.req.action,
    decision: verdict.decision,
    actorType: verdict.actorType,
    degraded: verdict.degraded,
  };
  if (verdict.challengeCleared) claims.challengeCleared = true;
  return claims;
}

const round = (n: number): number => Math.round(n * 10_000) / 10_000;
