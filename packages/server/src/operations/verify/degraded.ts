import { createHash } from "node:crypto";
import { timeOrderedId } from "../../lib/crypto.js";
import { signVerdictToken } from "../../tokens/verdictToken.js";
import type { Caller } from "../caller.js";
import type { Idempotency } from "./idempotency.js";
import type { Verdict, VerifyRequest } from "./schema.js";
import { claimsOf, eventOf, verdictOf, verifyCall } from "./verdict.js";
import type { VerifyDeps } from "./verifyDeps.js";

/**
 * The eventId of a degraded answer to a request with an idempotency key: the same in every process
 * for the same tenant, key and payload, so that degraded answers to one attempt (retries, or copies
 * racing in several processes while the store is slow) are one event, however many of them there
 * were (the events table keeps the first row of an id). Not time-ordered: events are listed by
 * createdAt.
 */
export function keyedEventId(idem: Idempotency): string {
  const digest = createHash("sha256")
    .update(`degraded\n${idem.tenantId}\n${idem.key}\n${idem.fingerprint}`)
    .digest()
    .subarray(0, 22);
  return `evt_${digest.toString("base64url")}`;
}

/**
 * Whom a degraded verdict answers when authentication itself could not reach the store: no tenant is
 * known, so its receipt names none and nothing is recorded.
 */
const UNAUTHENTICATED: Caller = Object.freeze({
  tenant: Object.freeze({ id: "unauthenticated", rawPii: false, logOnly: false, createdAt: 0 }),
  key: Object.freeze({
    id: "",
    tenantId: "unauthenticated",
    scopes: [],
    logOnly: false,
    createdAt: 0,
    revokedAt: null,
  }),
});

/**
 * The degraded verdict: always challenge, degraded true, signed with the last loaded key. Its event
 * is written after the response; while the store is down it waits in the bounded pending queue.
 * `caller` is undefined when even authentication could not reach the store. With an idempotency key
 * the event claims the key with this answer when it is written (unless an answer is stored under it
 * by then), so a retry replays it: one event per key, degraded or not. It records the tenant's
 * policy as this process last loaded it, if it has (the store may be what failed).
 */
export function degradedVerdict(
  deps: VerifyDeps,
  caller: Caller | undefined,
  req: Partial<VerifyRequest> | undefined,
  idem?: Idempotency,
): Verdict {
  const now = deps.clock();
  const keyed = caller !== undefined && idem !== undefined && idem.tenantId === caller.tenant.id;
  const eventId = keyed ? keyedEventId(idem) : timeOrderedId("evt", now);
  const session = typeof req?.session === "string" ? req.session : undefined;
  // What could be read of the request: it may not have passed validation. The subject is read only
  // for the attempt fingerprint (attempt.ts, total on any input).
  const read: VerifyRequest = {
    action: typeof req?.action === "string" ? req.action : "unknown",
    subject: (req?.subject ?? {}) as VerifyRequest["subject"],
    ...(session === undefined ? {} : { session }),
    ...(req?.context === undefined ? {} : { context: req.context }),
  };
  const call = verifyCall(
    caller ?? UNAUTHENTICATED,
    read,
    keyed ? idem : undefined,
    caller && deps.tenantPolicies.peek(caller.tenant.id),
    now,
  );
  const options = { kind: "degraded", eventId } as const;
  const unsigned = verdictOf(call, options);
  const verdict: Verdict = {
    ...unsigned,
    verdictToken: signVerdictToken(deps.keyring.activeSigner(), deps.tokens, claimsOf(call, unsigned), now),
  };
  if (caller) {
    deps.pendingEvents.add(
      eventOf(call, unsigned, options),
      keyed
        ? {
            tenantId: idem.tenantId,
            operation: idem.operation,
            key: idem.key,
            response: { fingerprint: idem.fingerprint, statusCode: 200, body: verdict },
            expiresAt: now + deps.idempotencyTtlMs,
          }
        : undefined,
    );
  }
  return verdict;
}
