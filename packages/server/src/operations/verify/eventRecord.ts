import type { DecisionCosts, EventRecord } from "../../domain.js";
import type { Caller } from "../caller.js";
import { attemptFingerprint } from "./attempt.js";
import type { Verdict, VerifyRequest } from "./schema.js";
import { ENGINE_VERSION } from "./version.js";

/** The principal of a verdict that resolved nobody (spec: empty strings and an empty list mean unknown). */
export const NO_PRINCIPAL: Verdict["principal"] = Object.freeze({
  resolved: false,
  operator: "",
  onBehalfOf: "",
  identityBasis: [],
}) as Verdict["principal"];

/** The event a verdict is recorded as: protected signal values only, never raw email or IP. */
export function eventRecord(
  caller: Caller,
  req: VerifyRequest,
  now: number,
  verdict: Omit<Verdict, "verdictToken">,
  wouldBe: EventRecord["decision"],
  costs: DecisionCosts,
  policyVersion: string,
  signals: Record<string, unknown>,
  scoring: Pick<EventRecord, "decidedBy" | "risk">,
): EventRecord {
  return {
    id: verdict.eventId,
    tenantId: caller.tenant.id,
    keyId: caller.key.id,
    createdAt: now,
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
    costs,
    // The attribution answered, so an event shows it later (GET /v1/events/{eventId}).
    signals: { ...signals, principal: verdict.principal },
    engineVersion: ENGINE_VERSION,
    policyVersion,
    attempt: attemptFingerprint(req.action, req.subject),
    decidedBy: scoring.decidedBy,
    risk: scoring.risk,
    // What the console searches by, from the signals already protected (evidence.ts, `recorded`).
    emailHash: typeof signals.emailSha256 === "string" ? signals.emailSha256 : null,
    network: typeof signals.ipNetwork === "string" ? signals.ipNetwork : null,
    reasonCodes: [...new Set(verdict.reasonDetails.map((r) => r.code))],
  };
}
