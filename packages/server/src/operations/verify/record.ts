import type { DecisionCosts, EventRecord } from "../../domain.js";
import { timeOrderedId } from "../../lib/crypto.js";
import type { ClearRedemption, IdempotencyKey } from "../../store/interfaces.js";
import { signVerdictTokenOffThread, type VerdictClaims } from "../../tokens/verdictToken.js";
import type { Caller } from "../caller.js";
import { replayOrConflict } from "../idempotentReplay.js";
import { CLEARED_REASON, type ClearCheck } from "./clearRedemption.js";
import type { Cancellation } from "./deadline.js";
import { enforcementModeFor } from "./enforcement.js";
import { eventRecord, NO_PRINCIPAL } from "./eventRecord.js";
import { reason } from "./reasonCodes.js";
import type { Verdict, VerifyRequest } from "./schema.js";
import type { VerifyDeps, VerifyResult } from "./verifyDeps.js";

/**
 * Verify's last phase: the verdict signed, its event written with the answer stored under its
 * idempotency key in one atomic store call, or the answer of the request that held the key first.
 */

/** The idempotency key of a verify, with its payload fingerprint. */
export type Idempotency = IdempotencyKey & { fingerprint: string };

/** The caller was authenticated from memory; its key was revoked before the verdict was recorded. */
export function keyRevoked(): VerifyResult {
  return { ok: false, code: "invalid_api_key" };
}

/** The stored verdict replayed, or 409 idempotency_conflict (operations/idempotentReplay.ts). */
export function replayedVerdict(sameFingerprint: boolean, body: unknown): VerifyResult {
  const r = replayOrConflict(sameFingerprint, body as Verdict);
  return r.ok ? { ok: true, verdict: r.body, replayed: true } : r;
}

/**
 * The allow of a re-verify whose scored challenge's clear is honored (spec, States and transitions):
 * scoring skipped. Null when the store found the clear no longer redeemable (a concurrent re-verify
 * used it); nothing was written then.
 */
export async function recordCleared(
  deps: VerifyDeps,
  caller: Caller,
  req: VerifyRequest,
  clear: Extract<ClearCheck, { ok: true }>,
  costs: DecisionCosts,
  policyVersion: string,
  idem: Idempotency | undefined,
  now: number,
  signal: Cancellation,
): Promise<VerifyResult | null> {
  const unsigned: UnsignedVerdict = {
    decision: "allow",
    actorType: "unknown",
    // Scoring was skipped: the honoured clear decided, and nothing weighed against it.
    confidence: 1,
    reasons: [CLEARED_REASON],
    reasonDetails: [reason("challenge_cleared", CLEARED_REASON)],
    principal: NO_PRINCIPAL,
    eventId: timeOrderedId("evt", now),
    degraded: false,
    enforcementMode: enforcementModeFor(caller, req.context?.logOnly),
    challengeCleared: true,
  };
  const verdict = await signed(deps, unsigned, caller.tenant.id, req, now);
  const event = eventRecord(
    caller,
    req,
    now,
    unsigned,
    "allow",
    costs,
    policyVersion,
    { challengeId: clear.challenge.id },
    { decidedBy: "clear", risk: null },
  );
  return recordVerdict(deps, event, verdict, idem, now, signal, clear.redemption);
}

/** A verdict before its token is signed. */
export type UnsignedVerdict = Omit<Verdict, "verdictToken">;

/**
 * The verdict with its token, signed on the thread pool (tokens/verdictToken.ts); the token's
 * decision fields are the verdict's own.
 */
export async function signed(
  deps: VerifyDeps,
  unsigned: UnsignedVerdict,
  tenantId: string,
  req: VerifyRequest,
  now: number,
): Promise<Verdict> {
  const claims: VerdictClaims = {
    tenantId,
    eventId: unsigned.eventId,
    session: req.session ?? null,
    action: req.action,
    decision: unsigned.decision,
    actorType: unsigned.actorType,
    degraded: unsigned.degraded,
  };
  if (unsigned.challengeCleared) claims.challengeCleared = true;
  const verdictToken = await signVerdictTokenOffThread(deps.keyring.activeSigner(), deps.tokens, claims, now);
  return { ...unsigned, verdictToken };
}

/**
 * Writes the event and, with an idempotency key, the answer stored under it (one atomic store call);
 * a concurrent request that claimed the key first is replayed instead. The verdict comes signed:
 * the stored answer holds its token, and the event is written only for a complete answer, so a
 * deadline passing while the token is signed (on the thread pool) leaves no event behind.
 * With `redeem`, the clear is spent in the same transaction, so only an answer that goes out spends
 * it; null when the store found it no longer redeemable (nothing written).
 */
export async function recordVerdict(
  deps: VerifyDeps,
  event: EventRecord,
  verdict: Verdict,
  idem: Idempotency | undefined,
  now: number,
  signal: Cancellation,
  redeem?: ClearRedemption,
): Promise<VerifyResult | null> {
  const outcome = await deps.store.events.record(
    event,
    idem && {
      tenantId: idem.tenantId,
      operation: idem.operation,
      key: idem.key,
      response: { fingerprint: idem.fingerprint, statusCode: 200, body: verdict },
      expiresAt: now + deps.idempotencyTtlMs,
    },
    signal,
    redeem ? { activeKey: true, redeem } : { activeKey: true },
  );
  if (outcome.kind === "not_redeemed") return null;
  if (outcome.kind === "key_revoked") return keyRevoked();
  if (outcome.kind === "replay") return replayedVerdict(true, outcome.response.body);
  if (outcome.kind === "conflict") return replayedVerdict(false, undefined);
  return { ok: true, verdict, replayed: false };
}
