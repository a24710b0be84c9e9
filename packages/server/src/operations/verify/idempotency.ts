import type { EnforcementMode } from "../../domain.js";
import { canonicalJson, sha256Hex } from "../../lib/crypto.js";
import type { CounterHit, IdempotencyKey, IdempotentResponse } from "../../store/interfaces.js";
import type { Caller } from "../caller.js";
import { replayOrConflict } from "../idempotentReplay.js";
import { enforcementModeFor } from "./enforcement.js";
import type { Leader } from "./keysInFlight.js";
import { countAlone, rateLimited } from "./rateLimit.js";
import type { Verdict, VerifyRequest } from "./schema.js";
import { keyRevoked, type VerifyDeps, type VerifyResult } from "./verifyDeps.js";

/**
 * Verify's idempotency: the key's payload fingerprint, and the answer already given under the key,
 * by a request in flight in this process (keysInFlight.ts) or stored. A verdict is stored under its
 * key when it is recorded (record.ts), in the same store call as its event.
 */

/** The idempotency key of a verify, with its payload fingerprint. */
export type Idempotency = IdempotencyKey & { fingerprint: string };

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

/** The stored verdict replayed, or 409 idempotency_conflict (operations/idempotentReplay.ts). */
export function replayedVerdict(sameFingerprint: boolean, body: unknown): VerifyResult {
  const r = replayOrConflict(sameFingerprint, body as Verdict);
  return r.ok ? { ok: true, verdict: r.body, replayed: true } : r;
}

/**
 * The answer of the request with the same key in flight in this process, once recorded under the key,
 * or undefined when this request is to do the work itself: the two are one request for the rate
 * limit (the leader was counted; the copy costs the store nothing). A leader that degraded or was
 * refused recorded nothing under the key; the first waiting request to find no leader left becomes the
 * next one, so a degraded leader hands the key on instead of letting every waiting copy race for it.
 */
export async function answerInFlight(
  deps: VerifyDeps,
  idem: Idempotency,
  leader: Leader<VerifyResult>,
  /** Makes this request the leader for its key (keysInFlight.ts). */
  lead: () => void,
): Promise<VerifyResult | undefined> {
  for (let current: Leader<VerifyResult> | undefined = leader; current; ) {
    const answer = await current.answer;
    if (answer.ok && !answer.verdict.degraded) {
      return replayedVerdict(current.fingerprint === idem.fingerprint, answer.verdict);
    }
    current = deps.keysInFlight.leaderOf(idem.tenantId, idem.key);
    if (!current) lead();
  }
  return undefined;
}

/**
 * The answer stored under the key, replayed (or 409 for another payload), counted against the key's
 * rate limit; nothing is written on a replay, so the key's revocation is read here.
 */
export async function replayStored(
  deps: VerifyDeps,
  caller: Caller,
  idem: Idempotency,
  stored: IdempotentResponse,
  /** The key's rate-limit counter (rateLimit.ts). */
  limitHit: CounterHit,
): Promise<VerifyResult> {
  if (!(await deps.store.apiKeys.isActive(caller.key.id))) return keyRevoked();
  const limit = await countAlone(deps, limitHit, deps.clock());
  if (limit.retryAfterSeconds !== undefined) return rateLimited(limit);
  return { ...replayedVerdict(stored.fingerprint === idem.fingerprint, stored.body), rateLimit: limit };
}
