import { ACTOR_TYPES, type ActorType, type EventRecord, type WorstCase } from "../../domain.js";
import { timeOrderedId } from "../../lib/crypto.js";
import { RISK_TIERS, type RiskTier } from "../../policy/tenantPolicy.js";
import { type ChallengeRecord, StoreUnavailableError } from "../../store/interfaces.js";
import type { Caller } from "../caller.js";
import { compareCompletion, completionKey } from "./completionKey.js";
import { type ChallengeDeps, type Issue, type Method, type Proof, type Refusal, refuse } from "./method.js";
import type { ChallengeRequest, ChallengeResponse } from "./schema.js";
import { selectMethod } from "./selection.js";

export type { ChallengeDeps } from "./method.js";

export const MAX_SESSION_LENGTH = 128;

export type ChallengeResult = { ok: true; challenge: ChallengeResponse; replayed?: true } | Refusal;

function view(c: ChallengeRecord): ChallengeResponse {
  const base: ChallengeResponse = {
    challengeId: c.id,
    method: c.method,
    instructions: c.instructions,
    boundTo: c.session,
    expiresAt: new Date(c.expiresAt).toISOString(),
  };
  return c.clearedAt === null ? base : { ...base, ok: true, clearedAt: new Date(c.clearedAt).toISOString() };
}

/** POST /v1/challenge: issue mode without challengeId and proof, completion mode with both. */
export async function challenge(
  deps: ChallengeDeps,
  caller: Caller,
  req: ChallengeRequest,
  idempotencyKey?: string,
): Promise<ChallengeResult> {
  if (req.session === undefined || req.session === "") return refuse("session_required");
  if (req.session.length > MAX_SESSION_LENGTH) return refuse("session_too_long");
  const hasId = req.challengeId !== undefined;
  const hasProof = req.proof !== undefined;
  if (hasId !== hasProof) {
    return refuse(
      "missing_required_field",
      hasId ? "proof is required to complete a challenge." : "challengeId is required with a proof.",
    );
  }
  // An issue retried issues another challenge (issuing never clears): only completions replay.
  return hasId
    ? complete(
        deps,
        caller,
        req,
        req.session,
        idempotencyKey && completionKey(idempotencyKey, req, req.session),
      )
    : issue(deps, caller, req, req.session);
}

async function issue(
  deps: ChallengeDeps,
  caller: Caller,
  req: ChallengeRequest,
  session: string,
): Promise<ChallengeResult> {
  if (req.eventId === undefined)
    return refuse("missing_required_field", "eventId is required to issue a challenge.");
  const asked = (req.context?.riskTier ?? "default") as RiskTier;
  if (!RISK_TIERS.includes(asked)) return refuse("invalid_risk_tier");
  const tenantId = caller.tenant.id;
  try {
    const event = await deps.store.events.get(tenantId, req.eventId);
    if (!event) return refuse("unknown_event_id", "No event with this eventId for this tenant.");
    // A challenge belongs to its event's attempt (docs/security-model.md): only a challenged attempt,
    // only its own session. A deny must not be escaped through friction.
    if (event.decision === "deny") return refuse("event_denied");
    if (event.decision !== "challenge") return refuse("event_not_challenged");
    if (event.session === null) return refuse("event_without_session");
    if (event.session !== session) {
      return refuse("challenge_session_mismatch", "The event's attempt is bound to another session.");
    }
    // One clear per challenged attempt: once a re-verify used one, another challenge on the same
    // event could never be honoured (store: event_clears), so it is refused here, plainly.
    if (await deps.store.challenges.eventClearUsed(tenantId, event.id))
      return refuse("event_already_cleared");
    const policy = await deps.tenantPolicies.get(tenantId);
    // The caller's tier or the event's own, whichever costs more (a higher tier never lowers cost: docs/api.md#post-v1challenge-and-re-verify).
    const tier = higherTier(asked, eventTier(event));
    const issue: Issue = { deps, tenantId, session, event, policy, tier };
    const method = await selectMethod(req.prefer, deps.methods, issue);
    const now = deps.clock();
    const id = timeOrderedId("chl", now);
    const record: ChallengeRecord = {
      id,
      tenantId,
      eventId: event.id,
      session,
      method: method.name,
      ...(await method.seal(issue, id)),
      issuedAt: now,
      expiresAt: now + deps.ttlMs,
      clearedAt: null,
      redeemedAt: null,
      proofRef: null,
      completionKey: null,
      attempt: event.attempt,
      eventDegraded: event.degraded,
    };
    // False: the event was removed (retention, erasure) since it was read above.
    if (!(await deps.store.challenges.insert(record)))
      return refuse("unknown_event_id", "No event with this eventId for this tenant.");
    return { ok: true, challenge: view(record) };
  } catch (err) {
    if (err instanceof StoreUnavailableError) return refuse("challenge_issue_failed");
    throw err;
  }
}

/**
 * The tier an event's own evidence calls for, sealed even when the caller asks for less (integrations
 * rarely pass riskTier): automation evidence (agent_abusive) is severe, since a proof of work that any
 * browser or script solves in a fraction of a second is no friction to a program; an abuse estimate of
 * three in four or more is elevated; a campaign's surge (campaign_surge) is severe, the friction priced
 * to one setup making attempts across networks. A degraded event was never scored: its tier is that of the worst
 * case its request's stateless evidence left open (signals.worstCase), so a degraded challenge costs
 * at least what a scored one would for the same attempt (docs/security-model.md, invariant 12); one
 * recorded without a worst case (the evidence could not be read) is severe, as nothing excluded
 * automation.
 */
export function eventTier(event: Pick<EventRecord, "actorType" | "risk" | "degraded" | "signals">): RiskTier {
  if (!event.degraded) {
    // One setup surging across networks: friction priced to a campaign (signals/campaign.ts).
    return surged(event.signals) ? "severe" : tierOf(event.actorType, event.risk?.estimate);
  }
  const worst = worstCaseOf(event.signals);
  if (!worst || worst.campaign) return "severe";
  return tierOf(worst.actorType, worst.riskEstimate);
}

/** Whether a scored event's findings hold a campaign's surge. */
function surged(signals: Record<string, unknown>): boolean {
  const findings = signals.findings;
  return (
    Array.isArray(findings) && findings.some((f) => (f as { id?: unknown } | null)?.id === "campaign_surge")
  );
}

function tierOf(actorType: ActorType, riskEstimate: number | undefined): RiskTier {
  if (actorType === "agent_abusive") return "severe";
  if (riskEstimate !== undefined && riskEstimate >= 0.75) return "elevated";
  return "default";
}

/** The worst case a degraded event recorded (verify's degraded.ts), when it holds a well-formed one. */
function worstCaseOf(signals: Record<string, unknown>): WorstCase | undefined {
  const w = signals.worstCase as Partial<WorstCase> | null | undefined;
  if (!w || typeof w.riskEstimate !== "number" || !ACTOR_TYPES.includes(w.actorType as ActorType))
    return undefined;
  return {
    actorType: w.actorType as ActorType,
    riskEstimate: w.riskEstimate,
    ...(w.campaign === true && { campaign: true }),
  };
}

const higherTier = (a: RiskTier, b: RiskTier): RiskTier =>
  RISK_TIERS.indexOf(a) >= RISK_TIERS.indexOf(b) ? a : b;

/**
 * Whether a proof is for this method: the one its `method` names (a payment proof must name
 * `provider_setup_intent`: docs/api.md#post-v1challenge-and-re-verify), or, without `method`, the one
 * that claims its members (no two methods claim one proof); an unknown name matches no method.
 */
function isProofFor(method: Method, proof: Proof): boolean {
  if (proof.method === undefined) return method.proof.claimsUnnamed?.(proof) ?? false;
  return typeof proof.method === "string" && method.proof.names.includes(proof.method);
}

/** A completion of a cleared challenge: the replayed answer for the one that cleared it, else 409. */
function alreadyCleared(c: ChallengeRecord, key: string | undefined): ChallengeResult {
  const relation = compareCompletion(c.completionKey, key);
  if (relation === "same") return { ok: true, challenge: view(c), replayed: true };
  if (relation === "same_key_other_payload") {
    return refuse(
      "idempotency_conflict",
      "This idempotency key cleared the challenge with a different payload; create a new key.",
    );
  }
  return refuse("challenge_already_solved");
}

/**
 * Completion. When several failures apply, the first in this order answers:
 * 1. 404 unknown_challenge (also another tenant's, or one issued for another eventId);
 * 2. 403 challenge_session_mismatch; 3. 409 challenge_already_solved; 4. 410 challenge_expired;
 * 5. 400 challenge_method_mismatch; 6. the method's refusal of the proof (method.ts, check): 400
 *    invalid_challenge_proof, or for a payment 400 payment_not_succeeded (503
 *    payment_verification_unavailable when the provider cannot answer).
 * The session is checked first so that another session learns nothing about the challenge's state.
 * A failed attempt leaves the challenge issued; the clear itself is one atomic, once-only update.
 * A cleared challenge answers 409, except to the completion that cleared it, retried with its
 * Idempotency-Key: that one gets its answer again (completionKey.ts).
 */
async function complete(
  deps: ChallengeDeps,
  caller: Caller,
  req: ChallengeRequest,
  session: string,
  key: string | undefined,
): Promise<ChallengeResult> {
  const tenantId = caller.tenant.id;
  const proof = req.proof ?? {};
  try {
    const c = await deps.store.challenges.get(tenantId, req.challengeId ?? "");
    if (!c || (req.eventId !== undefined && req.eventId !== c.eventId)) return refuse("unknown_challenge");
    if (c.session !== session) return refuse("challenge_session_mismatch");
    if (c.clearedAt !== null) return alreadyCleared(c, key);
    const now = deps.clock();
    if (now >= c.expiresAt) return refuse("challenge_expired");
    const method = deps.methods.find((m) => m.name === c.method);
    if (!method || !isProofFor(method, proof)) return refuse("challenge_method_mismatch");
    const check = await method.check({ deps, tenantId, challenge: c, proof, now });
    if (!check.ok) return check;
    const { singleUse } = check;
    const cleared = await deps.store.challenges.clear(tenantId, c.id, session, now, singleUse?.ref, key);
    if (cleared.kind === "proof_reused") {
      // The store reports a reused proof only for a proofRef given to it.
      if (!singleUse) throw new Error(`a ${c.method} completion with no proofRef was refused as reused`);
      return singleUse.reused;
    }
    // Lost the race to a concurrent valid completion (or it expired in between).
    if (cleared.kind === "not_clearable") {
      if (now >= c.expiresAt) return refuse("challenge_expired");
      const after = await deps.store.challenges.get(tenantId, c.id);
      return after && after.clearedAt !== null
        ? alreadyCleared(after, key)
        : refuse("challenge_already_solved");
    }
    return { ok: true, challenge: view(cleared.challenge) };
  } catch (err) {
    if (err instanceof StoreUnavailableError) return refuse("challenge_unavailable");
    throw err;
  }
}
