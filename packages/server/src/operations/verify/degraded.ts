import { createHash } from "node:crypto";
import { timeOrderedId } from "../../lib/crypto.js";
import type { TenantPolicy } from "../../policy/tenantPolicy.js";
import { signVerdictToken } from "../../tokens/verdictToken.js";
import type { Caller } from "../caller.js";
import { subjectError } from "./evidence.js";
import type { Idempotency } from "./idempotency.js";
import type { Verdict, VerifyRequest } from "./schema.js";
import { observeCall, worstCaseAssessment } from "./scoring.js";
import { emailHash } from "./signals/email.js";
import { readNetwork } from "./signals/ip.js";
import {
  claimsOf,
  eventOf,
  type UnscoredReading,
  type VerifyCall,
  verdictOf,
  verifyCall,
} from "./verdict.js";
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
 * policy as this process last loaded it, if it has (the store may be what failed), and what the
 * request shows without the store (readUnscored).
 */
export function degradedVerdict(
  deps: VerifyDeps,
  caller: Caller | undefined,
  req: Partial<VerifyRequest> | undefined,
  idem?: Idempotency,
): Verdict {
  const now = deps.clock();
  const keyed = caller !== undefined && idem !== undefined && idem.tenantId === caller.tenant.id;
  const policy = caller && deps.tenantPolicies.peek(caller.tenant.id);
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
  const call = verifyCall(caller ?? UNAUTHENTICATED, read, keyed ? idem : undefined, policy, now);
  const options = { kind: "degraded", eventId, unscored: readUnscored(deps, call, policy) } as const;
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

/**
 * What the request shows without the store: its stateless evidence (evidence.ts) read under the
 * tenant's policy, with the worst case it leaves open (scoring.ts, worstCaseAssessment), so that a
 * challenge on the event costs at least what a scored verdict's would (docs/security-model.md,
 * invariant 12). Without a copy of the policy in this process, for a request that never passed
 * validation, or when reading it fails, only the subject's email hash and network are recorded, and
 * no worst case: nothing then excludes automation, and a challenge on the event is sealed severe.
 * Never throws: the degraded verdict is the answer to every fault.
 */
function readUnscored(deps: VerifyDeps, call: VerifyCall, policy: TenantPolicy | undefined): UnscoredReading {
  const { subject } = call.req;
  if (policy && typeof subject === "object" && subject !== null) {
    try {
      if (subjectError(call.req)) return { recorded: protectedSubject(subject), worstCase: undefined };
      const observed = observeCall(deps, call, policy);
      const worst = worstCaseAssessment(deps.model, call, policy, observed);
      return {
        recorded: observed.recorded,
        // Rounded up, as the recorded risk of a scored event is rounded (verdict.ts): never below it.
        worstCase: {
          actorType: worst.actorType,
          riskEstimate: Math.ceil(worst.risk.estimate * 10_000) / 10_000,
          ...(observed.campaignKeys.length > 0 && { campaign: true }),
        },
      };
    } catch (err) {
      deps.report(err, "degraded verdict: the request's evidence could not be read");
    }
  }
  return { recorded: protectedSubject(subject), worstCase: undefined };
}

/** The subject's email hash and truncated network, as the evidence records them; total on any input. */
function protectedSubject(subject: unknown): Record<string, unknown> {
  const s = typeof subject === "object" && subject !== null ? (subject as Record<string, unknown>) : {};
  const email =
    typeof s.email === "string"
      ? emailHash(s.email)
      : typeof s.emailSha256 === "string"
        ? s.emailSha256.toLowerCase()
        : null;
  const address = typeof s.ip === "string" ? s.ip : typeof s.ipTrunc === "string" ? s.ipTrunc : undefined;
  return { emailSha256: email, ipNetwork: (address && readNetwork(address)?.text) ?? null };
}
