import { timeOrderedId } from "../../lib/crypto.js";
import { signVerdictToken } from "../../tokens/verdictToken.js";
import type { Caller } from "../caller.js";
import { resolveCosts } from "./decide.js";
import { enforcementModeFor } from "./enforcement.js";
import { eventRecord, NO_PRINCIPAL } from "./eventRecord.js";
import type { Verdict, VerifyRequest } from "./schema.js";
import type { VerifyDeps } from "./verifyDeps.js";

export const DEGRADED_REASON =
  "Warden could not complete its checks in time (store outage, timeout or internal error); this is a precautionary challenge.";

/**
 * The degraded verdict: always challenge, degraded true, signed with the last loaded key. Its event
 * is written after the response; while the store is down it waits in the bounded pending queue.
 * `caller` is undefined when even authentication could not reach the store.
 */
export function degradedVerdict(
  deps: VerifyDeps,
  caller: Caller | undefined,
  req: Partial<VerifyRequest> | undefined,
): Verdict {
  const now = deps.clock();
  const eventId = timeOrderedId("evt", now);
  const action = typeof req?.action === "string" ? req.action : "unknown";
  const session = typeof req?.session === "string" ? req.session : null;
  const mode = enforcementModeFor(caller, req?.context?.logOnly === true ? true : undefined);
  const verdict: Verdict = {
    decision: "challenge",
    actorType: "unknown",
    confidence: 0,
    reasons: [DEGRADED_REASON],
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
      resolveCosts(req?.context?.decisionCosts),
      deps.tenantPolicies.peek(caller.tenant.id)?.version ?? "unavailable",
      { degraded: true },
      { decidedBy: "degraded", risk: null },
    );
    deps.pendingEvents.add(event);
  }
  return verdict;
}
