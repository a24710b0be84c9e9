import { createHash } from "node:crypto";
import { timeOrderedId } from "../../lib/crypto.js";
import { signVerdictToken } from "../../tokens/verdictToken.js";
import type { Caller } from "../caller.js";
import { resolveCosts } from "./decide.js";
import { enforcementModeFor } from "./enforcement.js";
import { eventRecord, NO_PRINCIPAL } from "./eventRecord.js";
import { reason } from "./reasonCodes.js";
import type { Idempotency } from "./record.js";
import type { Verdict, VerifyRequest } from "./schema.js";
import type { VerifyDeps } from "./verifyDeps.js";

export const DEGRADED_REASON =
  "Warden could not complete its checks in time (store outage, timeout or internal error); this is a precautionary challenge.";

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
 * The degraded verdict: always challenge, degraded true, signed with the last loaded key. Its event
 * is written after the response; while the store is down it waits in the bounded pending queue.
 * `caller` is undefined when even authentication could not reach the store. With an idempotency key
 * the event claims the key with this answer when it is written (unless an answer is stored under it
 * by then), so a retry replays it: one event per key, degraded or not.
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
  const action = typeof req?.action === "string" ? req.action : "unknown";
  const session = typeof req?.session === "string" ? req.session : null;
  const mode = enforcementModeFor(caller, req?.context?.logOnly === true ? true : undefined);
  const verdict: Verdict = {
    decision: "challenge",
    actorType: "unknown",
    confidence: 0,
    reasons: [DEGRADED_REASON],
    reasonDetails: [reason("degraded", DEGRADED_REASON)],
    principal: NO_PRINCIPAL,
    verdictToken: signVerdictToken(
      deps.keyring.activeSigner(),
      deps.tokens,
      {
        tenantId: caller?.tenant.id ?? "unauthenticated",
        eventId,
        session,
        action,
        decision: "challenge",
        actorType: "unknown",
        degraded: true,
      },
      now,
    ),
    eventId,
    degraded: true,
    enforcementMode: mode,
  };
  if (caller) {
    // The tenant's weights as last loaded (the store may be what failed): the same precedence as a scored verdict.
    const policy = deps.tenantPolicies.peek(caller.tenant.id);
    const event = eventRecord(
      caller,
      // The subject is read only for the attempt fingerprint (attempt.ts, total on any input).
      {
        action,
        subject: (req?.subject ?? {}) as VerifyRequest["subject"],
        ...(session === null ? {} : { session }),
      },
      now,
      verdict,
      "challenge",
      resolveCosts(req?.context?.decisionCosts, policy?.decisionCosts(action)),
      policy?.version ?? "unavailable",
      { degraded: true },
      { decidedBy: "degraded", risk: null },
    );
    deps.pendingEvents.add(
      event,
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
