import type { EnforcementMode } from "../../domain.js";
import { canonicalJson, sha256Hex, timeOrderedId } from "../../lib/crypto.js";
import type { TenantPolicy } from "../../policy/tenantPolicy.js";
import type { Caller } from "../caller.js";
import { type RateLimitState, rateLimitHit, rateLimitState } from "../rateLimitWindow.js";
import { attemptFingerprint } from "./attempt.js";
import {
  ALREADY_USED,
  type ClearCheck,
  checkClear,
  clearedAfterDegradedReason,
  clearNotHonored,
  DENY_NOT_CLEARED,
} from "./clearRedemption.js";
import { Cancellation, withDeadline } from "./deadline.js";
import { confidenceFor, decide, raisesRisk, reasonDetailsFor, resolveCosts } from "./decide.js";
import type { DecisionModel } from "./decisionModel.js";
import { degradedVerdict } from "./degraded.js";
import { enforcementModeFor } from "./enforcement.js";
import { eventRecord } from "./eventRecord.js";
import { observe, subjectError } from "./evidence.js";
import type { Leader } from "./keysInFlight.js";
import { principalFor } from "./principal.js";
import { reason } from "./reasonCodes.js";
import {
  type Idempotency,
  keyRevoked,
  recordCleared,
  recordVerdict,
  replayedVerdict,
  signed,
  type UnsignedVerdict,
} from "./record.js";
import type { VerifyRequest } from "./schema.js";
import { mergeLimits, velocityChecks, velocityFindings } from "./signals/velocity.js";
import type { VerifyDeps, VerifyResult } from "./verifyDeps.js";

export { CLEARED_REASON } from "./clearRedemption.js";
export { DEGRADED_REASON, degradedVerdict } from "./degraded.js";
export type { VerifyDeps, VerifyResult } from "./verifyDeps.js";
export { ENGINE_VERSION } from "./version.js";

/**
 * Spec, payload fingerprints: SHA-256 of canonical JSON over action, session, surface, subject,
 * context; under log_only, the same with the mode, so that an observation recorded for a log-only
 * key or tenant is never replayed to an enforcing caller as its answer (409 idempotency_conflict).
 */
export function verifyFingerprint(req: VerifyRequest, mode: EnforcementMode = "enforce"): string {
  const { action, session, surface, subject, context } = req;
  const payload = sha256Hex(canonicalJson({ action, session, surface, subject, context }));
  return mode === "enforce" ? payload : sha256Hex(canonicalJson({ payload, enforcementMode: mode }));
}

/** The request's idempotency key with its payload fingerprint, when it has a key. */
export function idempotencyOf(
  caller: Caller,
  req: VerifyRequest,
  key: string | undefined,
): Idempotency | undefined {
  if (key === undefined) return undefined;
  return {
    tenantId: caller.tenant.id,
    operation: "verify",
    key,
    fingerprint: verifyFingerprint(req, enforcementModeFor(caller, req.context?.logOnly)),
  };
}

/**
 * POST /v1/verify as an operation. Expected refusals are results; every fault inside the deadline
 * (store error, timeout, bug) becomes the degraded challenge, never an exception.
 */
export async function verify(
  deps: VerifyDeps,
  caller: Caller,
  req: VerifyRequest,
  idempotencyKey: string | undefined,
  budgetMs: number = deps.deadlineMs,
): Promise<VerifyResult> {
  if ((req.subject.email !== undefined || req.subject.ip !== undefined) && !caller.tenant.rawPii) {
    return {
      ok: false,
      code: "raw_pii_not_enabled",
      message:
        "Raw subject.email or subject.ip needs the tenant's opt-in; send emailSha256 or ipTrunc instead.",
    };
  }
  const invalid = subjectError(req);
  if (invalid) return { ok: false, code: "invalid_field", message: invalid.message };

  const idem = idempotencyOf(caller, req, idempotencyKey);
  const leader = idem && deps.keysInFlight.leaderOf(idem.tenantId, idem.key);
  const cancel = new Cancellation();
  const lead = () => {
    if (idem) deps.keysInFlight.lead(idem.tenantId, idem.key, idem.fingerprint, answer);
  };
  const challengeId = req.context?.challengeId;
  const ahead =
    challengeId === undefined ? undefined : deps.clearsInFlight.reverifyOf(caller.tenant.id, challengeId);
  // The first re-verify of a clear in this process settles it before the others touch the store
  // (clearsInFlight.ts); the others are then scored on their own.
  const settle =
    challengeId !== undefined && !ahead
      ? deps.clearsInFlight.leadReverify(caller.tenant.id, challengeId)
      : () => {};
  const scored: Promise<VerifyResult> = withDeadline(Math.max(1, budgetMs), cancel, async () => {
    if (ahead) await ahead;
    return scoreAndRecord(deps, caller, req, idem, leader, lead, cancel, settle);
  }).catch((err: unknown): VerifyResult => {
    deps.report(err, "verify degraded");
    return { ok: true, verdict: degradedVerdict(deps, caller, req, idem), replayed: false };
  });
  // Only a re-verify has a clear to settle: the others pay no extra promise.
  const answer = challengeId === undefined ? scored : scored.finally(settle);
  if (!leader) lead();
  return answer;
}

async function scoreAndRecord(
  deps: VerifyDeps,
  caller: Caller,
  req: VerifyRequest,
  idem: Idempotency | undefined,
  leader: Leader<VerifyResult> | undefined,
  /** Makes this request the leader for its key (keysInFlight.ts). */
  lead: () => void,
  signal: Cancellation,
  /** Called once this request has settled its clear (redeemed, found used or unusable). */
  settled: () => void = () => {},
): Promise<VerifyResult> {
  const { store, policy } = deps;
  const tenantId = caller.tenant.id;
  const limitHit = rateLimitHit(deps.rateLimit, caller.key.id, "verify", caller.tenant.id);
  /** Counts this request against its key alone, where no velocity counters are hit with it. */
  const countAlone = async (now: number) =>
    rateLimitState(deps.rateLimit, (await store.counters.hit([limitHit], now))[0], now);
  if (idem) {
    // The same key in flight here: its answer, once recorded under the key, is this one's too, and
    // the two are one request for the rate limit (the leader was counted; the copy costs the store
    // nothing). A leader that degraded or was refused recorded nothing under the key: this request
    // does the work itself.
    // The first waiting request to find no leader left becomes the next one, so a degraded leader
    // hands the key on instead of letting every waiting copy race for it at once.
    for (let current = leader; current; ) {
      const led = await current.answer;
      if (led.ok && !led.verdict.degraded) {
        return replayedVerdict(current.fingerprint === idem.fingerprint, led.verdict);
      }
      current = deps.keysInFlight.leaderOf(idem.tenantId, idem.key);
      if (!current) lead();
    }
    // Fast path for retries: a key already answered replays before anything is counted again.
    const stored = await store.idempotency.find(idem, deps.clock());
    if (stored) {
      // Nothing is written on a replay, so the key's revocation is read here.
      if (!(await store.apiKeys.isActive(caller.key.id))) return keyRevoked();
      const limit = await countAlone(deps.clock());
      if (limit.retryAfterSeconds !== undefined) return rateLimited(limit);
      return { ...replayedVerdict(stored.fingerprint === idem.fingerprint, stored.body), rateLimit: limit };
    }
  }

  const tenantPolicy = await deps.tenantPolicies.get(tenantId);
  const now = deps.clock();
  let clearNote: string | undefined;
  let limit: RateLimitState | undefined;
  /** A clear this re-verify redeems if the verdict honours it (clearRedemption.ts). */
  let clear: Extract<ClearCheck, { ok: true }> | undefined;
  const challengeId = req.context?.challengeId;
  if (challengeId !== undefined) {
    // Counted before the clear is redeemed: a refused request must not use it up.
    limit = await countAlone(now);
    if (limit.retryAfterSeconds !== undefined) return rateLimited(limit);
    const window = { since: now - deps.clearWindowMs, minutes: Math.round(deps.clearWindowMs / 60_000) };
    const check = checkClear(
      await store.challenges.get(tenantId, challengeId),
      req.session,
      attemptFingerprint(req.action, req.subject),
      window,
    );
    if (check.ok) clear = check;
    else {
      clearNote = clearNotHonored(check.why);
      settled();
    }
  }
  const obs = observe(req, {
    model: policy,
    tenant: tenantPolicy,
    hosting: deps.hosting,
    agentKeys: deps.agentKeys,
    nowSeconds: Math.floor(now / 1000),
    nowMs: now,
    tenantId,
    pageKey: (kid) => deps.keyring.pageKey(kid),
  });
  const costs = resolveCosts(req.context?.decisionCosts, tenantPolicy.decisionCosts(req.action));
  if (clear && !clear.challenge.eventDegraded) {
    // A scored challenge's clear short-circuits scoring (spec, States and transitions): the clear
    // stands for the challenge, never for a deny. The tenant's deny list still applies (the policy may
    // have changed since the challenge was earned), and so does what this request itself carries
    // beyond the attempt's fingerprint (headers, form data, page signals, an agent signature): when
    // that alone scores deny, the clear is not used (docs/security-model.md, "Clears").
    const [denied] = obs.lists.deny;
    const earned = clear;
    if (denied !== undefined) {
      clearNote = clearNotHonored(`the tenant's deny list names ${denied}`);
    } else if (decide(assessed(obs, [], tenantPolicy, req.action), costs, policy).decision === "deny") {
      clearNote = clearNotHonored(DENY_NOT_CLEARED);
    } else {
      const cleared = await redeemOnce(deps, tenantId, earned.challenge.eventId, () =>
        recordCleared(deps, caller, req, earned, costs, tenantPolicy.version, idem, now, signal),
      );
      settled();
      if (cleared) return withLimit(cleared, limit as RateLimitState);
      clearNote = clearNotHonored(ALREADY_USED);
    }
    settled();
    clear = undefined;
  }
  const checks = velocityChecks(
    tenantId,
    req.action,
    obs.velocityKeys,
    velocityLimitsFor(policy, tenantPolicy),
  );
  // One store call counts the request against its key's rate limit and hits the velocity counters.
  const hits = checks.map((c) => c.hit);
  const counted = await store.counters.hit(limit ? hits : [limitHit, ...hits], now);
  const readings = limit ? counted : counted.slice(1);
  limit ??= rateLimitState(deps.rateLimit, counted[0], now);
  if (limit.retryAfterSeconds !== undefined) return rateLimited(limit);
  const velocity = velocityFindings(req.action, checks, readings, policy.weights.velocity);

  const assessment = decide(assessed(obs, velocity, tenantPolicy, req.action), costs, policy);
  const mode = enforcementModeFor(caller, req.context?.logOnly);
  if (clear && assessment.decision === "deny") {
    clearNote = clearNotHonored(DENY_NOT_CLEARED);
    clear = undefined;
  }
  const risk = {
    estimate: round(assessment.risk.estimate),
    low: round(assessment.risk.low),
    high: round(assessment.risk.high),
  };
  const recorded = {
    ...obs.recorded,
    findings: assessment.findings.map((f) => ({ id: f.id, logOdds: round(f.logOdds) })),
    risk,
  };
  const recordedRisk = { ...risk, raised: raisesRisk(assessment.findings) };
  /** The scored verdict, honouring `redeem` (a degraded event's clear) when given; signed and recorded. */
  const answer = async (redeem: typeof clear, note: string | undefined): Promise<VerifyResult | null> => {
    const decision = mode === "log_only" || redeem ? "allow" : assessment.decision;
    const details = reasonDetailsFor(assessment, costs, obs.channels);
    if (note) details.unshift(reason("clear_not_honoured", note));
    if (redeem)
      details.unshift(
        reason("challenge_cleared_after_degraded", clearedAfterDegradedReason(assessment.decision)),
      );
    if (mode === "log_only") {
      details.unshift(
        reason(
          "log_only",
          `Log-only mode: observed, not enforced; the decision would have been ${assessment.decision}.`,
        ),
      );
    }
    const unsigned: UnsignedVerdict = {
      decision,
      actorType: assessment.actorType,
      // The spec's "model confidence for the returned decision": the model's margin for it, also when
      // a tenant rule or log_only chose it (0 where another decision cost the model less).
      confidence: confidenceFor(decision, assessment.expectedCost),
      reasons: details.map((d) => d.message),
      reasonDetails: details,
      principal: principalFor(obs.agent, obs.businessDomain),
      eventId: timeOrderedId("evt", now),
      degraded: false,
      enforcementMode: mode,
    };
    if (redeem) unsigned.challengeCleared = true;
    const verdict = await signed(deps, unsigned, tenantId, req, now);
    const event = eventRecord(
      caller,
      req,
      now,
      unsigned,
      assessment.decision,
      costs,
      tenantPolicy.version,
      { ...recorded, ...(redeem ? { challengeId: redeem.challenge.id } : {}) },
      { decidedBy: redeem ? "clear" : assessment.rule ? "rule" : "model", risk: recordedRisk },
    );
    return recordVerdict(deps, event, verdict, idem, now, signal, redeem?.redemption);
  };
  const result = (await answer(clear, clearNote)) ?? (await answer(undefined, clearNotHonored(ALREADY_USED)));
  if (!result) throw new Error("verify: a verdict without a clear was refused as not redeemed");
  return withLimit(result, limit);
}

/**
 * Runs `redeem` unless a verify in this process is redeeming a clear of the same event (one clear per
 * attempt, whichever challenge earned it): then waits for it, and when it was honoured answers null
 * (used) without asking the store (clearsInFlight.ts).
 */
async function redeemOnce(
  deps: VerifyDeps,
  tenantId: string,
  eventId: string,
  redeem: () => Promise<VerifyResult | null>,
): Promise<VerifyResult | null> {
  if (deps.clearsInFlight.wasHonoured(tenantId, eventId, deps.clock())) return null;
  for (let pending = deps.clearsInFlight.of(tenantId, eventId); pending; ) {
    if (await pending) return null;
    pending = deps.clearsInFlight.of(tenantId, eventId);
  }
  const attempt = redeem();
  deps.clearsInFlight.track(
    tenantId,
    eventId,
    attempt.then(
      (r) => r?.ok === true,
      () => false,
    ),
    deps.clock,
  );
  return attempt;
}

/** What decide() weighs: the request's observation, with `extra` findings (velocity) beside its own. */
function assessed(
  obs: ReturnType<typeof observe>,
  extra: Parameters<typeof decide>[0]["findings"],
  tenant: TenantPolicy,
  action: string,
): Parameters<typeof decide>[0] {
  return {
    findings: extra.length === 0 ? obs.findings : [...obs.findings, ...extra],
    channels: obs.channels,
    browserConsistent: obs.browserConsistent,
    agent: obs.agent.outcome,
    lists: obs.lists,
    verifiedAgents: tenant.verifiedAgents(action),
  };
}

/** Answered by the route from `rateLimit`: the 429 with its Retry-After (http/rateLimit.ts). */
function rateLimited(limit: RateLimitState): VerifyResult {
  return { ok: false, code: "rate_limited", rateLimit: limit };
}

const withLimit = (result: VerifyResult, limit: RateLimitState): VerifyResult => ({
  ...result,
  rateLimit: limit,
});

const round = (n: number): number => Math.round(n * 10_000) / 10_000;

/** The built-in velocity limits with the tenant's own over them. */
function velocityLimitsFor(model: DecisionModel, tenant: TenantPolicy) {
  return mergeLimits(model.velocity, tenant.velocity);
}
