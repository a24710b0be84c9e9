/** Mapping between rows and records, and the guard that turns driver failures into StoreUnavailableError. */

import type { ChallengeMethod, EventRecord, Scope } from "../../domain.js";
import type {
  ApiKeyRecord,
  ChallengeRecord,
  IdempotentResponse,
  Observation,
  SigningKeyRecord,
  Tenant,
} from "../interfaces.js";
import { StoreRejectedError, StoreUnavailableError } from "../interfaces.js";
import type { Database } from "../schema.js";

export const bool = (v: boolean): number => (v ? 1 : 0);
/** Integer columns may come back as strings (PostgreSQL bigint); null stays null. */
export const nullableNumber = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function tenantFromRow(row: Omit<Database["tenants"], "payment_secret_key">): Tenant {
  return {
    id: row.id,
    rawPii: row.raw_pii === 1,
    logOnly: row.log_only === 1,
    createdAt: Number(row.created_at),
  };
}

export function keyFromRow(row: Database["api_keys"]): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    scopes: row.scopes.split(",").filter(Boolean) as Scope[],
    logOnly: row.log_only === 1,
    createdAt: Number(row.created_at),
    revokedAt: nullableNumber(row.revoked_at),
  };
}

export function signingKeyFromRow(row: Database["signing_keys"]): SigningKeyRecord {
  return {
    kid: row.kid,
    privateJwk: row.private_jwk,
    publicJwk: row.public_jwk,
    createdAt: Number(row.created_at),
    retiredAt: nullableNumber(row.retired_at),
    publishUntil: nullableNumber(row.publish_until),
  };
}

export function eventToRow(e: EventRecord): Database["events"] {
  return {
    id: e.id,
    tenant_id: e.tenantId,
    key_id: e.keyId,
    created_at: e.createdAt,
    action: e.action,
    surface: e.surface,
    session: e.session,
    decision: e.decision,
    would_be_decision: e.wouldBeDecision,
    actor_type: e.actorType,
    confidence: e.confidence,
    reasons: JSON.stringify(e.reasons),
    degraded: bool(e.degraded),
    enforcement_mode: e.enforcementMode,
    costs: JSON.stringify(e.costs),
    signals: JSON.stringify(e.signals),
    engine_version: e.engineVersion,
    policy_version: e.policyVersion,
    attempt: e.attempt,
    decided_by: e.decidedBy,
    risk_estimate: e.risk?.estimate ?? null,
    risk_low: e.risk?.low ?? null,
    risk_high: e.risk?.high ?? null,
    risk_raised: bool(e.risk?.raised === true),
    email_hash: e.emailHash,
    network: e.network,
    reason_codes: JSON.stringify([...new Set(e.reasonCodes)]),
  };
}

export function eventFromRow(r: Database["events"]): EventRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    keyId: r.key_id,
    createdAt: Number(r.created_at),
    action: r.action,
    surface: r.surface,
    session: r.session,
    decision: r.decision as EventRecord["decision"],
    wouldBeDecision: r.would_be_decision as EventRecord["decision"],
    actorType: r.actor_type as EventRecord["actorType"],
    confidence: Number(r.confidence),
    reasons: JSON.parse(r.reasons) as string[],
    degraded: r.degraded === 1,
    enforcementMode: r.enforcement_mode as EventRecord["enforcementMode"],
    costs: JSON.parse(r.costs) as EventRecord["costs"],
    signals: JSON.parse(r.signals) as Record<string, unknown>,
    engineVersion: r.engine_version,
    policyVersion: r.policy_version,
    attempt: r.attempt,
    decidedBy: r.decided_by as EventRecord["decidedBy"],
    risk:
      r.risk_estimate === null
        ? null
        : {
            estimate: Number(r.risk_estimate),
            low: Number(r.risk_low),
            high: Number(r.risk_high),
            raised: Number(r.risk_raised) === 1,
          },
    emailHash: r.email_hash,
    network: r.network,
    reasonCodes: r.reason_codes === null ? [] : (JSON.parse(r.reason_codes) as string[]),
  };
}

export function observationFromRow(r: Database["feedback"]): Observation {
  return {
    feedbackId: r.feedback_id,
    tenantId: r.tenant_id,
    eventId: r.event_id,
    outcome: r.outcome,
    value: r.value === null ? null : Number(r.value),
    unit: r.unit,
    source: r.source,
    observedAt: Number(r.observed_at),
    receivedAt: Number(r.received_at),
    identity: r.identity,
    status: r.status as Observation["status"],
    conflictsWith: r.conflicts_with,
  };
}

export function challengeFromRow(r: Database["challenges"]): ChallengeRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    eventId: r.event_id,
    session: r.session,
    method: r.method as ChallengeMethod,
    difficulty: r.difficulty === null ? null : Number(r.difficulty),
    seed: r.seed,
    instructions: JSON.parse(r.instructions) as Record<string, unknown>,
    issuedAt: Number(r.issued_at),
    expiresAt: Number(r.expires_at),
    clearedAt: nullableNumber(r.cleared_at),
    redeemedAt: nullableNumber(r.redeemed_at),
    proofRef: r.proof_ref,
    completionKey: r.completion_key ?? null,
    attempt: r.attempt,
    eventDegraded: r.event_degraded === 1,
  };
}

/** Any failure of the database becomes StoreUnavailableError; callers never see driver errors. */
export async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw err;
    if (err instanceof Error && err.name === "AbortError") throw err;
    const message = `${what}: ${err instanceof Error ? err.message : String(err)}`;
    if (refusesThisWrite(err)) throw new StoreRejectedError(message, { cause: err });
    throw new StoreUnavailableError(message, { cause: err });
  }
}

/**
 * Whether the database refused the statement for its data, so that the same statement can never
 * succeed: PostgreSQL's SQLSTATE classes 22 (data exception: a NUL byte, a value out of range) and 23
 * (integrity constraint); SQLite's constraint, type mismatch and too-big results.
 */
export function refusesThisWrite(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  if (/^2[23][0-9A-Z]{3}$/.test(code)) return true;
  return code.startsWith("SQLITE_CONSTRAINT") || code === "SQLITE_MISMATCH" || code === "SQLITE_TOOBIG";
}

/** A unique constraint refused the write (PostgreSQL 23505; SQLite SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE";
}

export function abortError(): Error {
  const err = new Error("aborted before commit");
  err.name = "AbortError";
  return err;
}

export function signingKeyToRow(k: SigningKeyRecord): Database["signing_keys"] {
  return {
    kid: k.kid,
    private_jwk: k.privateJwk,
    public_jwk: k.publicJwk,
    created_at: k.createdAt,
    retired_at: k.retiredAt,
    publish_until: k.publishUntil,
  };
}

export function responseFromRow(row: {
  fingerprint: string;
  status_code: number;
  body: string;
}): IdempotentResponse {
  return { fingerprint: row.fingerprint, statusCode: Number(row.status_code), body: JSON.parse(row.body) };
}
