import type { Caller } from "../caller.js";
import { type RateLimitState, rateLimitHit, rateLimitState } from "../rateLimitWindow.js";
import { ALREADY_USED, clearNotHonored, DENY_NOT_CLEARED } from "./clearRedemption.js";
import { Cancellation, withDeadline } from "./deadline.js";
import { degradedVerdict } from "./degraded.js";
import { subjectError } from "./evidence.js";
import { answerInFlight, type Idempotency, idempotencyOf, replayStored } from "./idempotency.js";
import type { Leader } from "./keysInFlight.js";
import { countAlone, rateLimited, withLimit } from "./rateLimit.js";
import { recordAnswer } from "./record.js";
import { clearRefusal, type RedeemableClear, readClear, redeemClear } from "./reverify.js";
import type { VerifyRequest } from "./schema.js";
import { assess, observeCall, velocityChecksOf } from "./scoring.js";
import { campaignFindings, campaignHits, campaignReadings } from "./signals/campaign.js";
import { velocityFindings } from "./signals/velocity.js";
import { verifyCall } from "./verdict.js";
import type { VerifyDeps, VerifyResult } from "./verifyDeps.js";

export { CLEARED_REASON } from "./clearRedemption.js";
export { degradedVerdict } from "./degraded.js";
export { DEGRADED_REASON } from "./verdict.js";
export type { VerifyDeps, VerifyResult } from "./verifyDeps.js";
export { ENGINE_VERSION } from "./version.js";

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
      : noop;
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
  leader: Leader<VerifyResult> | undefined,
  /** Makes this request the leader for its key (keysInFlight.ts). */
  lead: () => void,
  signal: Cancellation,
  /** Called once this request has settled its clear (redeemed, found used or unusable). */
  settled: () => void = noop,
): Promise<VerifyResult> {
  const limitHit = rateLimitHit(deps.rateLimit, caller.key.id, "verify", caller.tenant.id);
  if (idem) {
    // The answer already given under the key, if any: by the request in flight here with it, or stored.
    const led = leader && (await answerInFlight(deps, idem, leader, lead));
    if (led) return led;
    // Fast path for retries: a key already answered replays before anything is counted again.
    const stored = await deps.store.idempotency.find(idem, deps.clock());
    if (stored) return replayStored(deps, caller, idem, stored, limitHit);
  }
  const policy = await deps.tenantPolicies.get(caller.tenant.id);
  const call = verifyCall(caller, req, idem, policy, deps.clock());
  let limit: RateLimitState | undefined;
  /** A clear this re-verify redeems if its verdict honours it; else why it did not. */
  let clear: RedeemableClear | undefined;
  let clearNote: string | undefined;
  const challengeId = req.context?.challengeId;
  if (challengeId !== undefined) {
    // Counted before the clear is redeemed: a refused request must not use it up.
    limit = await countAlone(deps, limitHit, call.now);
    if (limit.retryAfterSeconds !== undefined) return rateLimited(limit);
    const check = await readClear(deps, call, challengeId);
    if (check.ok) clear = check;
    else {
      clearNote = clearNotHonored(check.why);
      settled();
    }
  }
  const observed = observeCall(deps, call, policy);
  if (clear && !clear.challenge.eventDegraded) {
    // A scored challenge's clear short-circuits scoring (docs/api.md#post-v1challenge-and-re-verify).
    const refused = clearRefusal(deps.model, call, policy, observed);
    const cleared = refused === undefined ? await redeemClear(deps, call, clear, signal) : null;
    settled();
    if (cleared) return withLimit(cleared, limit as RateLimitState);
    clearNote = clearNotHonored(refused ?? ALREADY_USED);
    clear = undefined;
  }
  const checks = velocityChecksOf(deps.model, call, policy, observed);
  const campaign = campaignHits(caller.tenant.id, req.action, observed.campaignKeys);
  const campaignRules = { ...deps.model.campaign, floor: policy.campaignFloor ?? deps.model.campaign.floor };
  // One store call counts the request against its key's rate limit (unless it was counted before its
  // clear) and hits the velocity and campaign counters.
  const hits = [...checks.map((c) => c.hit), ...campaign];
  const counted = await deps.store.counters.hit(limit ? hits : [limitHit, ...hits], call.now);
  const readings = limit ? counted : counted.slice(1);
  limit ??= rateLimitState(deps.rateLimit, counted[0], call.now);
  if (limit.retryAfterSeconds !== undefined) return rateLimited(limit);
  const velocity = [
    ...velocityFindings(req.action, checks, readings, deps.model.weights.velocity),
    ...campaignFindings(
      req.action,
      campaignReadings(observed.campaignKeys, readings.slice(checks.length), campaignRules),
      campaignRules,
      deps.model.weights.campaign,
    ),
  ];
  const assessment = assess(deps.model, call, policy, observed, velocity);
  if (clear && assessment.decision === "deny") {
    clearNote = clearNotHonored(DENY_NOT_CLEARED);
    clear = undefined;
  }
  const scored = { kind: "scored", assessment, observed, clearNote, redeems: clear?.challenge } as const;
  const result =
    (await recordAnswer(deps, call, scored, signal, clear?.redemption)) ??
    (await recordAnswer(
      deps,
      call,
      { ...scored, clearNote: clearNotHonored(ALREADY_USED), redeems: undefined },
      signal,
    ));
  if (!result) throw new Error("verify: a verdict without a clear was refused as not redeemed");
  return withLimit(result, limit);
}

const noop = (): void => {};
