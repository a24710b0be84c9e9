import type { TenantPolicy } from "../../policy/tenantPolicy.js";
import { attemptFingerprint } from "./attempt.js";
import { type ClearCheck, checkClear, DENY_NOT_CLEARED } from "./clearRedemption.js";
import type { Cancellation } from "./deadline.js";
import type { DecisionModel } from "./decisionModel.js";
import type { RequestEvidence } from "./evidence.js";
import { recordAnswer } from "./record.js";
import { assess } from "./scoring.js";
import type { VerifyCall } from "./verdict.js";
import type { VerifyDeps, VerifyResult } from "./verifyDeps.js";

/**
 * A re-verify's clear (context.challengeId, after a solved challenge): read and checked, then, for a
 * challenge issued on a scored verdict, redeemed in place of scoring. A clear earned on a degraded
 * verdict is redeemed by the scored verdict instead (verdict.ts, `redeems`).
 */

/** A clear the re-verify may redeem if its verdict honours it. */
export type RedeemableClear = Extract<ClearCheck, { ok: true }>;

/** The clear `challengeId` names, checked against this call (clearRedemption.ts). */
export async function readClear(
  deps: VerifyDeps,
  call: VerifyCall,
  challengeId: string,
): Promise<ClearCheck> {
  const window = { since: call.now - deps.clearWindowMs, minutes: Math.round(deps.clearWindowMs / 60_000) };
  return checkClear(
    await deps.store.challenges.get(call.caller.tenant.id, challengeId),
    call.req.session,
    attemptFingerprint(call.req.action, call.req.subject),
    window,
  );
}

/**
 * Why a scored challenge's clear cannot stand for this attempt, or undefined when it can. The clear
 * stands for the challenge, never for a deny (docs/api.md#post-v1challenge-and-re-verify): the tenant's deny list
 * still applies (the policy may have changed since the challenge was earned), and so does what this
 * request itself carries beyond the attempt's fingerprint (headers, form data, page signals, an agent
 * signature): when that alone scores deny, the clear is not used (docs/security-model.md, "Clears").
 */
export function clearRefusal(
  model: DecisionModel,
  call: VerifyCall,
  policy: TenantPolicy,
  observed: RequestEvidence,
): string | undefined {
  const [denied] = observed.lists.deny;
  if (denied !== undefined) return `the tenant's deny list names ${denied}`;
  if (assess(model, call, policy, observed, []).decision === "deny") return DENY_NOT_CLEARED;
  return undefined;
}

/**
 * The cleared verdict, scoring skipped, recorded with the clear spent in the same store call; null
 * when the clear is used already (by a re-verify in this process or, per the store, in any).
 */
export function redeemClear(
  deps: VerifyDeps,
  call: VerifyCall,
  clear: RedeemableClear,
  observed: RequestEvidence,
  signal: Cancellation,
): Promise<VerifyResult | null> {
  const cleared = { kind: "cleared", challenge: clear.challenge, recorded: observed.recorded } as const;
  return redeemOnce(deps, call.caller.tenant.id, clear.challenge.eventId, () =>
    recordAnswer(deps, call, cleared, signal, clear.redemption),
  );
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
