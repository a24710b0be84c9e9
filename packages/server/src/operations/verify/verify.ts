import type { TenantPolicy } from "../../policy/tenantPolicy.js";
import type { ClearRedemption, CounterHit } from "../../store/interfaces.js";
import type { Caller } from "../caller.js";
import { type RateLimitState, rateLimitHit, rateLimitState } from "../rateLimitWindow.js";
import { ALREADY_USED, clearNotHonored, DEGRADED_CLEAR_DENIED } from "./clearRedemption.js";
import { Cancellation, withDeadline } from "./deadline.js";
import type { Assessment } from "./decide.js";
import { degradedVerdict } from "./degraded.js";
import { type RequestEvidence, subjectError } from "./evidence.js";
import { answerInFlight, type Idempotency, idempotencyOf, replayStored } from "./idempotency.js";
import type { Leader } from "./keysInFlight.js";
import { countAlone, rateLimited, withLimit } from "./rateLimit.js";
import { recordAnswer } from "./record.js";
import { clearRefusal, type RedeemableClear, readClear, redeemClear } from "./reverify.js";
import type { VerifyRequest } from "./schema.js";
import { assess, observeCall, velocityChecksOf } from "./scoring.js";
import { campaignFindings, campaignHits, campaignReadings } from "./signals/campaign.js";
import type { Finding } from "./signals/findings.js";
import { velocityFindings } from "./signals/velocity.js";
import { type VerifyCall, verifyCall } from "./verdict.js";
import type { VerifyDeps, VerifyResult } from "./verifyDeps.js";

export { CLEARED_REASON } from "./clearRedemption.js";
export { ENGINE_VERSION } from "./decisionModel.js";
export { degradedVerdict } from "./degraded.js";
export { DEGRADED_REASON } from "./verdict.js";
export type { VerifyDeps, VerifyResult } from "./verifyDeps.js";

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
  const keyLeader = idem && deps.keysInFlight.leaderOf(idem.tenantId, idem.key);
  const leadKey = () => {
    if (idem) deps.keysInFlight.lead(idem.tenantId, idem.key, idem.fingerprint, answer);
  };
  const challengeId = req.context?.challengeId;
  const clearLeader =
    challengeId === undefined ? undefined : deps.clearsInFlight.leaderOf(caller.tenant.id, challengeId);
  // The first re-verify of a clear in this process leads: it settles the clear before those that
  // follow it touch the store (clearsInFlight.ts); they are then scored on their own.
  const stopLeadingClear =
    challengeId !== undefined && !clearLeader
      ? deps.clearsInFlight.lead(caller.tenant.id, challengeId)
      : noop;
  const flight: InFlight = { keyLeader, leadKey, stopLeadingClear, cancel: new Cancellation() };
  const scored: Promise<VerifyResult> = withDeadline(Math.max(1, budgetMs), flight.cancel, async () => {
    if (clearLeader) await clearLeader;
    return scoreAndRecord(deps, caller, req, idem, flight);
  }).catch((err: unknown): VerifyResult => {
    deps.report(err, "verify degraded");
    return { ok: true, verdict: degradedVerdict(deps, caller, req, idem), replayed: false };
  });
  // Only a re-verify leads a clear: the others pay no extra promise.
  const answer = challengeId === undefined ? scored : scored.finally(stopLeadingClear);
  if (!keyLeader) leadKey();
  return answer;
}

/**
 * Where this verify stands among those in flight in this process: the one it follows for its
 * idempotency key (keysInFlight.ts), how it leads instead, how it stops leading the re-verifies of
 * its clear (clearsInFlight.ts), and its deadline's cancellation.
 */
interface InFlight {
  keyLeader: Leader<VerifyResult> | undefined;
  /** Makes this verify the leader for its idempotency key. */
  leadKey: () => void;
  /**
   * Called once this verify has settled its clear (redeemed, found used or unusable): the re-verifies
   * of the clear that follow it go on (a no-op for one that does not lead).
   */
  stopLeadingClear: () => void;
  cancel: Cancellation;
}

/**
 * Verify's phases in order, inside the deadline: the answer already given under the idempotency key
 * (idempotency.ts); the clear a re-verify carries, which for a scored challenge stands in for scoring
 * (reverify.ts); the evidence, the velocity counters hit with the key's rate limit (rateLimit.ts) and
 * the decision (scoring.ts); the verdict (verdict.ts), signed and recorded (record.ts).
 */
async function scoreAndRecord(
  deps: VerifyDeps,
  caller: Caller,
  req: VerifyRequest,
  idem: Idempotency | undefined,
  flight: InFlight,
): Promise<VerifyResult> {
  const limitHit = rateLimitHit(deps.rateLimit, caller.key.id, "verify", caller.tenant.id);
  const given = idem && (await answerGivenUnderKey(deps, caller, idem, flight, limitHit));
  if (given) return given;
  const policy = await deps.tenantPolicies.get(caller.tenant.id);
  const call = verifyCall(caller, req, idem, policy, deps.clock());
  const reverify = await readCarriedClear(deps, call, flight, limitHit);
  if ("refused" in reverify) return reverify.refused;
  const observed = observeCall(deps, call, policy);
  const scoring = await clearInsteadOfScore(deps, call, policy, observed, reverify, flight);
  if ("cleared" in scoring) return scoring.cleared;
  const counted = await countAttempt(deps, call, policy, observed, limitHit, reverify.limit);
  if ("refused" in counted) return counted.refused;
  const assessment = assess(deps.model, call, policy, observed, counted.velocity);
  const scored = { assessment, observed, carried: reverify.carried };
  return withLimit(
    await recordScored(deps, call, scored, degradedClearAfter(assessment, scoring.clear), flight.cancel),
    counted.limit,
  );
}

/**
 * The answer already given under the idempotency key, if any: by the verify with the key in flight
 * here (which this one follows), or stored (a retry replays before anything is counted again).
 */
async function answerGivenUnderKey(
  deps: VerifyDeps,
  caller: Caller,
  idem: Idempotency,
  flight: InFlight,
  limitHit: CounterHit,
): Promise<VerifyResult | undefined> {
  const followed = flight.keyLeader && (await answerInFlight(deps, idem, flight.keyLeader, flight.leadKey));
  if (followed) return followed;
  const stored = await deps.store.idempotency.find(idem, deps.clock());
  return stored ? replayStored(deps, caller, idem, stored, limitHit) : undefined;
}

/** What a re-verify's clear has come to: redeemable if its verdict honours it, else why it is not. */
interface ClearState {
  clear: RedeemableClear | undefined;
  note: string | undefined;
}

const NO_CLEAR: ClearState = { clear: undefined, note: undefined };
const notHonoured = (why: string): ClearState => ({ clear: undefined, note: clearNotHonored(why) });

/** A re-verify's clear as read: counted against the key's rate limit first (`limit`). */
interface CarriedClear {
  limit: RateLimitState | undefined;
  clear: ClearState;
  /** The challenge it carried, when that is this attempt's: the event names it. */
  carried: string | undefined;
}

/**
 * The clear a re-verify carries (none for a first verify), read once the request is counted against
 * its key's rate limit: a refused request must not use the clear up.
 */
async function readCarriedClear(
  deps: VerifyDeps,
  call: VerifyCall,
  flight: InFlight,
  limitHit: CounterHit,
): Promise<{ refused: VerifyResult } | CarriedClear> {
  const challengeId = call.req.context?.challengeId;
  if (challengeId === undefined) return { limit: undefined, clear: NO_CLEAR, carried: undefined };
  const limit = await countAlone(deps, limitHit, call.now);
  if (limit.retryAfterSeconds !== undefined) return { refused: rateLimited(limit) };
  const check = await readClear(deps, call, challengeId);
  if (check.ok) return { limit, clear: { clear: check, note: undefined }, carried: check.challenge.id };
  flight.stopLeadingClear();
  return { limit, clear: notHonoured(check.why), carried: undefined };
}

/**
 * A scored challenge's clear stands in for scoring (docs/api.md#post-v1challenge-and-re-verify):
 * redeemed, the attempt is cleared; refused or used already, it is scored, with why. The clear of a
 * challenge issued on a degraded verdict is kept for the scored answer (degradedClearAfter).
 */
async function clearInsteadOfScore(
  deps: VerifyDeps,
  call: VerifyCall,
  policy: TenantPolicy,
  observed: RequestEvidence,
  reverify: CarriedClear,
  flight: InFlight,
): Promise<{ cleared: VerifyResult } | { clear: ClearState }> {
  const { clear } = reverify.clear;
  if (!clear || clear.challenge.eventDegraded) return { clear: reverify.clear };
  const refused = clearRefusal(deps.model, call, policy, observed);
  const cleared =
    refused === undefined ? await redeemClear(deps, call, clear, observed, flight.cancel) : null;
  flight.stopLeadingClear();
  if (cleared) return { cleared: withLimit(cleared, reverify.limit as RateLimitState) };
  return { clear: notHonoured(refused ?? ALREADY_USED) };
}

/**
 * One store call counts the request against its key's rate limit (unless it was counted before its
 * clear: `counted`) and hits the velocity and campaign counters, whose readings are findings.
 */
async function countAttempt(
  deps: VerifyDeps,
  call: VerifyCall,
  policy: TenantPolicy,
  observed: RequestEvidence,
  limitHit: CounterHit,
  counted: RateLimitState | undefined,
): Promise<{ refused: VerifyResult } | { limit: RateLimitState; velocity: Finding[] }> {
  const { action } = call.req;
  const checks = velocityChecksOf(deps.model, call, policy, observed);
  const campaign = campaignHits(call.caller.tenant.id, action, observed.campaignKeys, observed.network);
  const campaignRules = { ...deps.model.campaign, floor: policy.campaignFloor ?? deps.model.campaign.floor };
  const hits = [...checks.map((c) => c.hit), ...campaign];
  const readings = await deps.store.counters.hit(counted ? hits : [limitHit, ...hits], call.now);
  const counters = counted ? readings : readings.slice(1);
  const limit = counted ?? rateLimitState(deps.rateLimit, readings[0], call.now);
  if (limit.retryAfterSeconds !== undefined) return { refused: rateLimited(limit) };
  const velocity = [
    ...velocityFindings(action, checks, counters, deps.model.weights.velocity),
    ...campaignFindings(
      action,
      campaignReadings(observed.campaignKeys, observed.network, counters.slice(checks.length), campaignRules),
      campaignRules,
      deps.model.weights.campaign,
    ),
  ];
  return { limit, velocity };
}

/**
 * Only a degraded verdict's clear is still in hand once the attempt is scored. It let the attempt be
 * scored, and the scored answer is the attempt's whatever it decides: an allow or a challenge is
 * answered allow (the clear honoured), a deny stays a deny and spends the clear all the same, so that
 * the attempt ends there, one story from its degraded verdict to its deny (docs/security-model.md,
 * invariant 5). `spends` is what the answer's write redeems.
 */
const degradedClearAfter = (
  assessment: Assessment,
  state: ClearState,
): ClearState & { spends: ClearRedemption | undefined } =>
  state.clear && assessment.decision === "deny"
    ? { clear: undefined, note: DEGRADED_CLEAR_DENIED, spends: state.clear.redemption }
    : { ...state, spends: state.clear?.redemption };

/**
 * The scored verdict, signed and recorded, spending the clear it honours (or its deny spends) in the
 * same write; when another request spent that clear first, recorded without it (ALREADY_USED).
 */
async function recordScored(
  deps: VerifyDeps,
  call: VerifyCall,
  scoring: { assessment: Assessment; observed: RequestEvidence; carried: string | undefined },
  state: ClearState & { spends: ClearRedemption | undefined },
  cancel: Cancellation,
): Promise<VerifyResult> {
  const scored = {
    kind: "scored",
    ...scoring,
    clearNote: state.note,
    redeems: state.clear?.challenge,
  } as const;
  const result =
    (await recordAnswer(deps, call, scored, cancel, state.spends)) ??
    (await recordAnswer(
      deps,
      call,
      { ...scored, clearNote: clearNotHonored(ALREADY_USED), redeems: undefined },
      cancel,
    ));
  if (!result) throw new Error("verify: a verdict without a clear was refused as not redeemed");
  return result;
}

const noop = (): void => {};
