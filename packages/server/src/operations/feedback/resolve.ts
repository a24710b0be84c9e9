import type { ObservationStatus } from "../../domain.js";
import type { ErrorCode } from "../../errors.js";
import type { FeedbackResolution, Store } from "../../store/interfaces.js";
import type { Caller } from "../caller.js";
import { conflictingOutcomes, type Outcome } from "./conflicts.js";
import { resolutionRecord } from "./ledger.js";
import type { ResolutionRequest, ResolutionView } from "./schema.js";

export interface ResolveDeps {
  store: Store;
  clock: () => number;
}

export type ResolveResult =
  | { ok: true; view: ResolutionView; replayed: boolean }
  | { ok: false; code: ErrorCode; message: string };

const fail = (code: ErrorCode, message: string): ResolveResult => ({ ok: false, code, message });

/**
 * POST /v1/feedback/{feedbackId}/resolution as an operation. A person settles a quarantine (docs/api.md#resolving-a-quarantined-observation-scope-ledgerwrite): reject, and the observation never counts; accept, and it counts like any
 * effective one while the effective observations of its event that it conflicts with are superseded
 * and stop counting. The conflict matrix says two such labels cannot both hold, so accepting one is
 * deciding that the other was wrong, and the event's effective labels stay free of contradictions,
 * as they are after every ingest. The same resolution asked again answers the stored one (who, when,
 * note); the other one is 409, because a resolution is final.
 */
export async function resolveQuarantined(
  deps: ResolveDeps,
  caller: Caller,
  feedbackId: string,
  req: ResolutionRequest,
): Promise<ResolveResult> {
  const tenantId = caller.tenant.id;
  // Another tenant's observation is indistinguishable from a missing one.
  const observation = await deps.store.feedback.get(tenantId, feedbackId);
  if (!observation)
    return fail("unknown_feedback_id", "No observation with this feedbackId for this tenant.");
  const note = req.note?.trim() || null;
  // An observation's outcome and event never change, so the conflicts read here still hold when the
  // store applies them; its status, which does change, is checked by the store atomically.
  const outcome = await deps.store.feedback.resolve(
    {
      tenantId,
      feedbackId,
      eventId: observation.eventId,
      resolution: req.resolution,
      note,
      keyId: caller.key.id,
      resolvedAt: deps.clock(),
    },
    // Stored outcomes were validated against the vocabulary when they were ingested.
    req.resolution === "accept" ? conflictingOutcomes(observation.outcome as Outcome) : [],
  );
  switch (outcome.kind) {
    case "unknown":
      return fail("unknown_feedback_id", "No observation with this feedbackId for this tenant.");
    case "not_quarantined":
      return fail(
        "feedback_not_quarantined",
        `The observation is ${outcome.status}, not quarantined; only a quarantined observation can be resolved.`,
      );
    case "already_resolved": {
      const stored = outcome.resolution;
      if (stored.resolution !== req.resolution) {
        return fail(
          "feedback_already_resolved",
          `The observation was already ${PAST[stored.resolution]}; a resolution is final.`,
        );
      }
      // What that resolution (or a later accept that superseded it) left, read now: the status read
      // above may predate a concurrent resolution.
      const now = await deps.store.feedback.get(tenantId, feedbackId);
      return { ok: true, view: view(stored, now?.status ?? observation.status), replayed: true };
    }
    case "resolved":
      return {
        ok: true,
        view: view(outcome.resolution, req.resolution === "accept" ? "effective" : "rejected"),
        replayed: false,
      };
  }
}

const PAST = { accept: "accepted", reject: "rejected" } as const;

function view(r: FeedbackResolution, status: ObservationStatus): ResolutionView {
  return { feedbackId: r.feedbackId, eventId: r.eventId, status, ...resolutionRecord(r) };
}
