import type { ErrorCode } from "../../errors.js";
import { canonicalJson, sha256Hex, timeOrderedId } from "../../lib/crypto.js";
import { type Store, StoreUnavailableError } from "../../store/interfaces.js";
import type { Caller } from "../caller.js";
import { replayOrConflict } from "../idempotentReplay.js";
import { conflictingOutcomes } from "./conflicts.js";
import type { FeedbackAck, FeedbackRequest } from "./schema.js";

/** observedAt may be at most this far ahead of the server's clock (clock skew between systems). */
export const OBSERVED_AT_MAX_SKEW_MS = 5 * 60_000;

export interface FeedbackDeps {
  store: Store;
  clock: () => number;
  idempotencyTtlMs: number;
}

export type IngestResult =
  | { ok: true; ack: FeedbackAck; replayed: boolean }
  | { ok: false; code: ErrorCode; message: string };

const fail = (code: ErrorCode, message: string): IngestResult => ({ ok: false, code, message });

/**
 * Spec, payload fingerprints: over eventId, outcome, value, unit (default usd), source (null when
 * omitted) and observedAt (normalized), computed over the request as sent: an omitted observedAt
 * stays omitted, so a retry with the same key replays instead of conflicting.
 */
export function feedbackFingerprint(req: FeedbackRequest, observedAtIso: string | undefined): string {
  return sha256Hex(
    canonicalJson({
      eventId: req.eventId,
      outcome: req.outcome,
      value: req.value,
      unit: req.unit ?? "usd",
      source: req.source ?? null,
      observedAt: observedAtIso,
    }),
  );
}

/** POST /v1/feedback as an operation: validate, look the event up, append atomically. */
export async function ingestFeedback(
  deps: FeedbackDeps,
  caller: Caller,
  req: FeedbackRequest,
  idempotencyKey: string | undefined,
): Promise<IngestResult> {
  const receivedAt = deps.clock();
  if (req.unit !== undefined && req.value === undefined) {
    return fail("unit_without_value", "unit needs a value; omit unit when the outcome has no magnitude.");
  }
  let observedAtIso: string | undefined;
  if (req.observedAt !== undefined) {
    const ms = Date.parse(req.observedAt);
    if (!Number.isFinite(ms)) return fail("invalid_observed_at", "observedAt is not a valid date-time.");
    if (ms > receivedAt + OBSERVED_AT_MAX_SKEW_MS) {
      return fail("invalid_observed_at", "observedAt is more than 5 minutes in the future.");
    }
    observedAtIso = new Date(ms).toISOString();
  }
  const tenantId = caller.tenant.id;
  const fingerprint = feedbackFingerprint(req, observedAtIso);
  const idem =
    idempotencyKey === undefined ? undefined : { tenantId, operation: "feedback", key: idempotencyKey };

  try {
    if (idem) {
      const stored = await deps.store.patient.idempotency.find(idem, receivedAt);
      if (stored) return replayedAck(stored.fingerprint === fingerprint, stored.body as FeedbackAck);
    }
    // Another tenant's event is indistinguishable from a missing one.
    if (!(await deps.store.events.get(tenantId, req.eventId))) {
      return fail("unknown_event_id", "No event with this eventId for this tenant.");
    }
  } catch (err) {
    if (err instanceof StoreUnavailableError)
      return fail("feedback_lookup_failed", "The ledger could not look up the event.");
    throw err;
  }

  const observedAt = observedAtIso === undefined ? receivedAt : Date.parse(observedAtIso);
  const value = req.value ?? null;
  const unit = value === null ? null : (req.unit ?? "usd");
  const source = req.source ?? null;
  // Spec, Feedback observation: identity is tenant, event, outcome, value, unit, source, observedAt.
  const identity = sha256Hex(
    canonicalJson({ tenantId, eventId: req.eventId, outcome: req.outcome, value, unit, source, observedAt }),
  );
  const ack: FeedbackAck = { ok: true, eventId: req.eventId };
  try {
    const outcome = await deps.store.feedback.append(
      {
        feedbackId: timeOrderedId("fb", receivedAt),
        tenantId,
        eventId: req.eventId,
        outcome: req.outcome,
        value,
        unit,
        source,
        observedAt,
        receivedAt,
        identity,
      },
      conflictingOutcomes(req.outcome),
      idem && {
        ...idem,
        response: { fingerprint, statusCode: 200, body: ack },
        expiresAt: receivedAt + deps.idempotencyTtlMs,
      },
    );
    // Removed (retention, erasure) since it was looked up above: as unknown as one never recorded.
    if (outcome.kind === "unknown_event")
      return fail("unknown_event_id", "No event with this eventId for this tenant.");
    if (outcome.kind === "replay") return replayedAck(true, outcome.response.body as FeedbackAck);
    if (outcome.kind === "conflict") return replayedAck(false, ack);
    return { ok: true, ack, replayed: false };
  } catch (err) {
    if (err instanceof StoreUnavailableError) {
      return fail(
        "feedback_ingest_failed",
        "The ledger could not store the observation; nothing was stored.",
      );
    }
    throw err;
  }
}

/** The stored acknowledgement replayed, or 409 idempotency_conflict (operations/idempotentReplay.ts). */
function replayedAck(sameFingerprint: boolean, ack: FeedbackAck): IngestResult {
  const r = replayOrConflict(sameFingerprint, ack);
  return r.ok ? { ok: true, ack: r.body, replayed: true } : r;
}
