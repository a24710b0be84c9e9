import { randomBytes } from "node:crypto";
import {
  ACTOR_TYPES,
  type ActorType,
  type ChallengeMethod,
  type EventRecord,
  type WorstCase,
} from "../../domain.js";
import type { ErrorCode } from "../../errors.js";
import { timeOrderedId } from "../../lib/crypto.js";
import type { TenantPolicies } from "../../policy/tenantPolicies.js";
import { RISK_TIERS, type RiskTier, type TenantPolicy } from "../../policy/tenantPolicy.js";
import { type ChallengeRecord, type Store, StoreUnavailableError } from "../../store/interfaces.js";
import { type KeyLookup, verifyAgent, WEB_BOT_AUTH_TAG } from "../../webBotAuth/verifyAgent.js";
import type { Caller } from "../caller.js";
import { normaliseHeaders } from "../verify/signals/browserHeaders.js";
import { compareCompletion, completionKey } from "./completionKey.js";
import { checkDeviceAttestation, deviceAttestationChallenge } from "./deviceAttestation.js";
import { selectMethod } from "./methods.js";
import { newSeed, POW_ALGORITHM, solvesPow } from "./proofOfWork.js";
import type { ChallengeRequest, ChallengeResponse } from "./schema.js";
import { CHALLENGE_METADATA_KEY, checkSetupIntent, type PaymentSettings } from "./stripeSetupIntents.js";

export const MAX_SESSION_LENGTH = 128;

export interface ChallengeDeps {
  store: Store;
  clock: () => number;
  ttlMs: number;
  payment: PaymentSettings;
  tenantPolicies: TenantPolicies;
  /** The agent registry, for web_bot_auth_stepup proofs (the same verifier as verify). */
  agentKeys: KeyLookup;
  signatureSkewSeconds: number;
}

export type ChallengeResult =
  | { ok: true; challenge: ChallengeResponse; replayed?: true }
  | { ok: false; code: ErrorCode; message?: string };

/** An expected failure; without a message the catalogue's message for the code is used. */
const fail = (code: ErrorCode, message?: string): ChallengeResult =>
  message === undefined ? { ok: false, code } : { ok: false, code, message };

function view(c: ChallengeRecord): ChallengeResponse {
  const base: ChallengeResponse = {
    challengeId: c.id,
    method: c.method,
    instructions: c.instructions,
    boundTo: c.session,
    expiresAt: new Date(c.expiresAt).toISOString(),
  };
  return c.clearedAt === null ? base : { ...base, ok: true, clearedAt: new Date(c.clearedAt).toISOString() };
}

/** POST /v1/challenge: issue mode without challengeId and proof, completion mode with both. */
export async function challenge(
  deps: ChallengeDeps,
  caller: Caller,
  req: ChallengeRequest,
  idempotencyKey?: string,
): Promise<ChallengeResult> {
  if (req.session === undefined || req.session === "") return fail("session_required");
  if (req.session.length > MAX_SESSION_LENGTH) return fail("session_too_long");
  const hasId = req.challengeId !== undefined;
  const hasProof = req.proof !== undefined;
  if (hasId !== hasProof) {
    return fail(
      "missing_required_field",
      hasId ? "proof is required to complete a challenge." : "challengeId is required with a proof.",
    );
  }
  // An issue retried issues another challenge (issuing never clears): only completions replay.
  return hasId
    ? complete(
        deps,
        caller,
        req,
        req.session,
        idempotencyKey && completionKey(idempotencyKey, req, req.session),
      )
    : issue(deps, caller, req, req.session);
}

async function issue(
  deps: ChallengeDeps,
  caller: Caller,
  req: ChallengeRequest,
  session: string,
): Promise<ChallengeResult> {
  if (req.eventId === undefined)
    return fail("missing_required_field", "eventId is required to issue a challenge.");
  const asked = (req.context?.riskTier ?? "default") as RiskTier;
  if (!RISK_TIERS.includes(asked)) return fail("invalid_risk_tier");
  const tenantId = caller.tenant.id;
  try {
    const event = await deps.store.events.get(tenantId, req.eventId);
    if (!event) return fail("unknown_event_id", "No event with this eventId for this tenant.");
    // A challenge belongs to its event's attempt (docs/security-model.md): only a challenged attempt,
    // only its own session. A deny must not be escaped through friction.
    if (event.decision === "deny") return fail("event_denied");
    if (event.decision !== "challenge") return fail("event_not_challenged");
    if (event.session === null) return fail("event_without_session");
    if (event.session !== session) {
      return fail("challenge_session_mismatch", "The event's attempt is bound to another session.");
    }
    // One clear per challenged attempt: once a re-verify used one, another challenge on the same
    // event could never be honoured (store: event_clears), so it is refused here, plainly.
    if (await deps.store.challenges.eventClearUsed(tenantId, event.id)) return fail("event_already_cleared");
    const policy = await deps.tenantPolicies.get(tenantId);
    // The caller's tier or the event's own, whichever costs more (a higher tier never lowers cost: docs/api.md#post-v1challenge-and-re-verify).
    const tier = higherTier(asked, eventTier(event));
    const issuable = new Set<ChallengeMethod>(["proof_of_work"]);
    // Only look the provider key up when the caller would take a payment challenge.
    if (req.prefer?.includes("payment_preauth") && (await deps.store.tenants.paymentKey(tenantId))) {
      issuable.add("payment_preauth");
    }
    // Step-up proves the key that signed the attempt: without a recorded key there is nothing to
    // prove, and any registered operator's signature would clear it.
    const agent = recordedAgent(event.signals);
    if (agent?.keyid !== undefined && (agent.outcome === "verified" || policy.webBotAuthStepUp))
      issuable.add("web_bot_auth_stepup");
    const webauthn = policy.deviceAttestation;
    if (webauthn) issuable.add("device_attestation");
    const method = selectMethod(req.prefer, issuable);
    const now = deps.clock();
    const id = timeOrderedId("chl", now);
    const sealed =
      method === "payment_preauth"
        ? paymentChallenge(id)
        : method === "web_bot_auth_stepup"
          ? stepUpChallenge(agent?.keyid ?? "")
          : method === "device_attestation" && webauthn
            ? deviceAttestationChallenge(id, session, webauthn, deps.ttlMs)
            : powChallenge(tier, policy);
    const record: ChallengeRecord = {
      id,
      tenantId,
      eventId: event.id,
      session,
      method,
      ...sealed,
      issuedAt: now,
      expiresAt: now + deps.ttlMs,
      clearedAt: null,
      redeemedAt: null,
      proofRef: null,
      completionKey: null,
      attempt: event.attempt,
      eventDegraded: event.degraded,
    };
    // False: the event was removed (retention, erasure) since it was read above.
    if (!(await deps.store.challenges.insert(record)))
      return fail("unknown_event_id", "No event with this eventId for this tenant.");
    return { ok: true, challenge: view(record) };
  } catch (err) {
    if (err instanceof StoreUnavailableError) return fail("challenge_issue_failed");
    throw err;
  }
}

/**
 * The tier an event's own evidence calls for, sealed even when the caller asks for less (integrations
 * rarely pass riskTier): automation evidence (agent_abusive) is severe, since a proof of work that any
 * browser or script solves in a fraction of a second is no friction to a program; an abuse estimate of
 * three in four or more is elevated. A degraded event was never scored: its tier is that of the worst
 * case its request's stateless evidence left open (signals.worstCase), so a degraded challenge costs
 * at least what a scored one would for the same attempt (docs/security-model.md, invariant 12); one
 * recorded without a worst case (the evidence could not be read) is severe, as nothing excluded
 * automation.
 */
export function eventTier(event: Pick<EventRecord, "actorType" | "risk" | "degraded" | "signals">): RiskTier {
  if (!event.degraded) return tierOf(event.actorType, event.risk?.estimate);
  const worst = worstCaseOf(event.signals);
  return worst ? tierOf(worst.actorType, worst.riskEstimate) : "severe";
}

function tierOf(actorType: ActorType, riskEstimate: number | undefined): RiskTier {
  if (actorType === "agent_abusive") return "severe";
  if (riskEstimate !== undefined && riskEstimate >= 0.75) return "elevated";
  return "default";
}

/** The worst case a degraded event recorded (verify's degraded.ts), when it holds a well-formed one. */
function worstCaseOf(signals: Record<string, unknown>): WorstCase | undefined {
  const w = signals.worstCase as Partial<WorstCase> | null | undefined;
  if (!w || typeof w.riskEstimate !== "number" || !ACTOR_TYPES.includes(w.actorType as ActorType))
    return undefined;
  return { actorType: w.actorType as ActorType, riskEstimate: w.riskEstimate };
}

const higherTier = (a: RiskTier, b: RiskTier): RiskTier =>
  RISK_TIERS.indexOf(a) >= RISK_TIERS.indexOf(b) ? a : b;

/** The agent identity recorded with the event by verify (signals.agent), if the attempt was signed. */
function recordedAgent(
  signals: Record<string, unknown>,
): { outcome: string; keyid: string | undefined } | undefined {
  const a = signals.agent as { outcome?: unknown; keyid?: unknown } | null | undefined;
  if (!a || typeof a.outcome !== "string") return undefined;
  return { outcome: a.outcome, keyid: typeof a.keyid === "string" ? a.keyid : undefined };
}

/** The tenant's difficulty for the tier (never below the documented 4/5/6), sealed into the challenge. */
function powChallenge(
  tier: RiskTier,
  policy: TenantPolicy,
): Pick<ChallengeRecord, "difficulty" | "seed" | "instructions"> {
  const difficulty = policy.powDifficulty[tier];
  const seed = newSeed();
  return { difficulty, seed, instructions: { type: "pow", difficulty, seed, algorithm: POW_ALGORITHM } };
}

/** Instructions for payment_preauth: a Stripe SetupIntent, confirmed by the client, naming this challenge. */
function paymentChallenge(id: string): Pick<ChallengeRecord, "difficulty" | "seed" | "instructions"> {
  return {
    difficulty: null,
    seed: null,
    instructions: {
      type: "stripe_setup_intent",
      metadata: { [CHALLENGE_METADATA_KEY]: id },
      steps:
        "Create and confirm a Stripe SetupIntent with this metadata (no charge is made), then complete with proof { method: provider_setup_intent, setupIntentId }.",
    },
  };
}

/**
 * web_bot_auth_stepup: the agent signs a request with the key of the original attempt, with this
 * nonce in its Signature-Input, and hands over the signed request's headers as the proof.
 */
function stepUpChallenge(keyid: string): Pick<ChallengeRecord, "difficulty" | "seed" | "instructions"> {
  const nonce = randomBytes(32).toString("base64");
  return {
    difficulty: null,
    seed: nonce,
    instructions: {
      type: "web_bot_auth",
      tag: WEB_BOT_AUTH_TAG,
      nonce,
      keyid,
      components: ["@authority", "signature-agent"],
      steps:
        'Sign a request with the same key (keyid) as the original attempt: Signature-Input with nonce set to this nonce, tag "web-bot-auth", created and expires, covering @authority and signature-agent (when sent); then complete with proof { method: "web_bot_auth", headers: { host, signature-agent, signature, signature-input } }.',
    },
  };
}

/** The wire names of proof methods (docs/api.md, challenge). */
const PROOF_METHODS: ReadonlyMap<string, ChallengeMethod> = new Map([
  ["provider_setup_intent", "payment_preauth"],
  ["web_bot_auth", "web_bot_auth_stepup"],
  ["webauthn", "device_attestation"],
  ["proof_of_work", "proof_of_work"],
]);

/**
 * The method a proof is for: the one its `method` names, or, without `method`, proof of work for a
 * `nonce` and step-up for `headers`. A payment proof must name `provider_setup_intent` (docs/api.md#post-v1challenge-and-re-verify:
 * "under the method name provider_setup_intent"); an unknown name matches no method.
 */
function proofMethod(proof: NonNullable<ChallengeRequest["proof"]>): ChallengeMethod | undefined {
  if (proof.method !== undefined) return PROOF_METHODS.get(proof.method);
  if (proof.headers !== undefined) return "web_bot_auth_stepup";
  if (proof.nonce !== undefined) return "proof_of_work";
  return undefined;
}

/** A completion of a cleared challenge: the replayed answer for the one that cleared it, else 409. */
function alreadyCleared(c: ChallengeRecord, key: string | undefined): ChallengeResult {
  const relation = compareCompletion(c.completionKey, key);
  if (relation === "same") return { ok: true, challenge: view(c), replayed: true };
  if (relation === "same_key_other_payload") {
    return fail(
      "idempotency_conflict",
      "This idempotency key cleared the challenge with a different payload; create a new key.",
    );
  }
  return fail("challenge_already_solved");
}

/**
 * Completion. When several failures apply, the first in this order answers:
 * 1. 404 unknown_challenge (also another tenant's, or one issued for another eventId);
 * 2. 403 challenge_session_mismatch; 3. 409 challenge_already_solved; 4. 410 challenge_expired;
 * 5. 400 challenge_method_mismatch; 6. 400 invalid_challenge_proof (a WebAuthn proof too) or payment_not_succeeded
 *    (503 payment_verification_unavailable when the provider cannot answer).
 * The session is checked first so that another session learns nothing about the challenge's state.
 * A failed attempt leaves the challenge issued; the clear itself is one atomic, once-only update.
 * A cleared challenge answers 409, except to the completion that cleared it, retried with its
 * Idempotency-Key: that one gets its answer again (completionKey.ts).
 */
async function complete(
  deps: ChallengeDeps,
  caller: Caller,
  req: ChallengeRequest,
  session: string,
  key: string | undefined,
): Promise<ChallengeResult> {
  const tenantId = caller.tenant.id;
  const proof = req.proof ?? {};
  try {
    const c = await deps.store.challenges.get(tenantId, req.challengeId ?? "");
    if (!c || (req.eventId !== undefined && req.eventId !== c.eventId)) return fail("unknown_challenge");
    if (c.session !== session) return fail("challenge_session_mismatch");
    if (c.clearedAt !== null) return alreadyCleared(c, key);
    const now = deps.clock();
    if (now >= c.expiresAt) return fail("challenge_expired");
    if (proofMethod(proof) !== c.method) return fail("challenge_method_mismatch");
    let proofRef: string | undefined;
    if (c.method === "payment_preauth") {
      const secretKey = await deps.store.tenants.paymentKey(tenantId);
      if (!secretKey) {
        // Removed since the challenge was issued: no retry can prove it (not a retryable 503).
        return fail(
          "payment_not_succeeded",
          "No payment provider is configured for this tenant any more; this challenge cannot be proved. Issue a fresh one.",
        );
      }
      proofRef = typeof proof.setupIntentId === "string" ? proof.setupIntentId : "";
      const check = await checkSetupIntent(secretKey, deps.payment, proofRef, c);
      if (!check.ok) return fail(check.code, `The payment proof was not accepted: ${check.why}.`);
    } else if (c.method === "web_bot_auth_stepup") {
      const keyid = typeof c.instructions.keyid === "string" ? c.instructions.keyid : "";
      // A step-up issued before a key was required names none: no signature can prove it.
      if (keyid === "") {
        return fail(
          "invalid_challenge_proof",
          "This step-up names no key to prove; issue a fresh challenge.",
        );
      }
      const result = verifyAgent({ headers: normaliseHeaders(proof.headers) ?? {} }, deps.agentKeys, {
        now: Math.floor(now / 1000),
        skewSeconds: deps.signatureSkewSeconds,
        require: { nonce: c.seed ?? "", keyid },
        hosts: (await deps.tenantPolicies.get(tenantId)).webBotAuthHosts,
      });
      if (result.outcome !== "verified") {
        return fail(
          "invalid_challenge_proof",
          `The Web Bot Auth proof was not accepted (${result.outcome === "absent" ? "no signature" : result.why}).`,
        );
      }
    } else if (c.method === "device_attestation") {
      const settings = (await deps.tenantPolicies.get(tenantId)).deviceAttestation;
      if (!settings) {
        return fail("invalid_challenge_proof", "Device attestation is no longer configured for this tenant.");
      }
      const check = await checkDeviceAttestation(proof, c, settings);
      if (!check.ok)
        return fail("invalid_challenge_proof", `The WebAuthn proof was not accepted: ${check.why}.`);
      // One credential clears one challenge: a key kept by a bot farm is not a standing pass.
      proofRef = `webauthn:${check.credentialId}`;
    } else {
      const nonce = typeof proof.nonce === "string" ? proof.nonce : "";
      // Completion checks the difficulty sealed at issue, never a current tier or policy.
      if (c.seed === null || c.difficulty === null || !solvesPow(c.seed, nonce, c.difficulty)) {
        return fail("invalid_challenge_proof");
      }
    }
    const cleared = await deps.store.challenges.clear(tenantId, c.id, session, now, proofRef, key);
    if (cleared.kind === "proof_reused") {
      return c.method === "device_attestation"
        ? fail(
            "invalid_challenge_proof",
            "The WebAuthn proof was not accepted: this credential already cleared another challenge.",
          )
        : fail(
            "payment_not_succeeded",
            "The payment proof was not accepted: this SetupIntent already cleared another challenge.",
          );
    }
    // Lost the race to a concurrent valid completion (or it expired in between).
    if (cleared.kind === "not_clearable") {
      if (now >= c.expiresAt) return fail("challenge_expired");
      const after = await deps.store.challenges.get(tenantId, c.id);
      return after && after.clearedAt !== null
        ? alreadyCleared(after, key)
        : fail("challenge_already_solved");
    }
    return { ok: true, challenge: view(cleared.challenge) };
  } catch (err) {
    if (err instanceof StoreUnavailableError) return fail("challenge_unavailable");
    throw err;
  }
}
