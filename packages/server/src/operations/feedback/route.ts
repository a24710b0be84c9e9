import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { requireCaller } from "../../http/auth.js";
import { IDEMPOTENCY_HEADER_SCHEMA, idempotencyKeyOf } from "../../http/idempotencyKey.js";
import { queryDate } from "../../http/queryDate.js";
import type { RouteSettings } from "../../http/types.js";
import { type FeedbackDeps, ingestFeedback } from "./ingest.js";
import { ledgerSummary } from "./ledger.js";
import { resolveQuarantined } from "./resolve.js";
import {
  FeedbackAck,
  FeedbackRequest,
  LedgerQuery,
  LedgerSummary,
  ResolutionParams,
  ResolutionRequest,
  ResolutionView,
} from "./schema.js";

const ingestSettings: RouteSettings = {
  scope: "feedback:write",
  operation: "feedback",
  onStoreFault: "feedback_lookup_failed",
  fieldCodes: {
    outcome: "invalid_outcome",
    value: "invalid_value",
    unit: "invalid_unit",
    source: "invalid_source",
    observedAt: "invalid_observed_at",
  },
};
export const readSettings: RouteSettings = {
  scope: "ledger:read",
  operation: "ledger",
  onStoreFault: "store_unavailable",
  consoleSession: true,
  fieldCodes: { since: "invalid_query", until: "invalid_query", action: "invalid_query" },
};

/** A write to the ledger; the console may send it with its session cookie (http/auth.ts). */
const resolveSettings: RouteSettings = {
  scope: "ledger:write",
  operation: "feedback_resolution",
  onStoreFault: "store_unavailable",
  consoleSession: true,
  consoleWrite: true,
  fieldCodes: { resolution: "invalid_resolution" },
};

export function registerFeedback(
  app: FastifyInstance,
  deps: FeedbackDeps,
  hooks: { onRequest: preHandlerHookHandler[] },
): void {
  app.post<{ Body: FeedbackRequest }>(
    "/v1/feedback",
    {
      config: { warden: ingestSettings },
      onRequest: hooks.onRequest,
      schema: {
        summary: "Attach a business outcome to an earlier verify event",
        tags: ["feedback"],
        headers: IDEMPOTENCY_HEADER_SCHEMA,
        body: FeedbackRequest,
        response: { 200: FeedbackAck, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request.headers["idempotency-key"], request.body.idempotencyKey);
      const result = await ingestFeedback(deps, requireCaller(request), request.body, key);
      if (!result.ok) throw new ApiError(result.code, result.message);
      if (result.replayed) reply.header("idempotent-replayed", "true");
      return result.ack;
    },
  );

  app.post<{ Params: ResolutionParams; Body: ResolutionRequest }>(
    "/v1/feedback/:feedbackId/resolution",
    {
      config: { warden: resolveSettings },
      onRequest: hooks.onRequest,
      schema: {
        summary: "Resolve a quarantined observation: accept it (it counts) or reject it (it never counts)",
        tags: ["ledger"],
        params: ResolutionParams,
        body: ResolutionRequest,
        response: { 200: ResolutionView, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request, reply) => {
      const result = await resolveQuarantined(
        deps,
        requireCaller(request),
        request.params.feedbackId,
        request.body,
      );
      if (!result.ok) throw new ApiError(result.code, result.message);
      if (result.replayed) reply.header("idempotent-replayed", "true");
      return result.view;
    },
  );

  app.get<{ Querystring: LedgerQuery }>(
    "/v1/ledger/summary",
    {
      config: { warden: readSettings },
      onRequest: hooks.onRequest,
      schema: {
        summary:
          "Ledger totals for the tenant: effective outcomes, dollar total, ARR, quarantined observations",
        tags: ["ledger"],
        querystring: LedgerQuery,
        response: { 200: LedgerSummary, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request) => {
      const { action } = request.query;
      const since = queryDate(request.query.since, "since");
      const until = queryDate(request.query.until, "until");
      return ledgerSummary(deps.store, requireCaller(request).tenant.id, {
        ...(since === undefined ? {} : { since }),
        ...(until === undefined ? {} : { until }),
        ...(action === undefined ? {} : { action }),
      });
    },
  );
}
