import type { EventRecord } from "../../domain.js";
import type { ClearRedemption } from "../../store/interfaces.js";
import { signVerdictTokenOffThread } from "../../tokens/verdictToken.js";
import type { Cancellation } from "./deadline.js";
import { replayedVerdict } from "./idempotency.js";
import type { Verdict } from "./schema.js";
import {
  claimsOf,
  eventOf,
  type UnsignedVerdict,
  type VerdictOptions,
  type VerifyCall,
  verdictOf,
} from "./verdict.js";
import { keyRevoked, type VerifyDeps, type VerifyResult } from "./verifyDeps.js";

/**
 * Verify's last phase: the verdict signed, its event written with the answer stored under its
 * idempotency key in one atomic store call, or the answer of the request that held the key first.
 */

/**
 * The verdict `o` describes (verdict.ts), signed and recorded with its event; with `redeem`, the
 * clear it spends. Null when the store found the clear no longer redeemable (nothing written).
 */
export async function recordAnswer(
  deps: VerifyDeps,
  call: VerifyCall,
  o: VerdictOptions,
  signal: Cancellation,
  redeem?: ClearRedemption,
): Promise<VerifyResult | null> {
  const unsigned = verdictOf(call, o);
  const verdict = await signed(deps, call, unsigned);
  return recordVerdict(deps, call, eventOf(call, unsigned, o), verdict, signal, redeem);
}

/**
 * The verdict with its token, signed on the thread pool (tokens/verdictToken.ts); the token's
 * decision fields are the verdict's own.
 */
async function signed(deps: VerifyDeps, call: VerifyCall, unsigned: UnsignedVerdict): Promise<Verdict> {
  const verdictToken = await signVerdictTokenOffThread(
    deps.keyring.activeSigner(),
    deps.tokens,
    claimsOf(call, unsigned),
    call.now,
  );
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
async function recordVerdict(
  deps: VerifyDeps,
  call: VerifyCall,
  event: EventRecord,
  verdict: Verdict,
  signal: Cancellation,
  redeem: ClearRedemption | undefined,
): Promise<VerifyResult | null> {
  const { idem } = call;
  const outcome = await deps.store.events.record(
    event,
    idem && {
      tenantId: idem.tenantId,
      operation: idem.operation,
      key: idem.key,
      response: { fingerprint: idem.fingerprint, statusCode: 200, body: verdict },
      expiresAt: call.now + deps.idempotencyTtlMs,
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
