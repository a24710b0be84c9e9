import type { FastifyInstance } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { requireCaller } from "../../http/auth.js";
import { eventWithObservations, observationView } from "../feedback/ledger.js";
import { EventView } from "../feedback/schema.js";
import { readPage } from "./cursor.js";
import { type InsightDeps, iso, pageSize, schema, scopeOf, sendCsv } from "./readRoute.js";
import { EventPage, type EventSummary, EventsQuery, PageQuery, QuarantinedPage } from "./schema.js";

/** The lists (events, quarantined observations; paginated) and one event in full. */
export function registerEventRoutes(
  app: FastifyInstance,
  deps: InsightDeps,
  route: Pick<Parameters<FastifyInstance["get"]>[1] & object, "config" | "onRequest">,
): void {
  const { store } = deps;
  app.get<{ Querystring: EventsQuery }>(
    "/v1/events",
    {
      ...route,
      schema: schema(
        "Events of the period, newest first, paginated; by session, decision or actorType",
        EventsQuery,
        EventPage,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const q = request.query;
      const scope = scopeOf(q, deps.clock());
      const { items: page, nextCursor } = await readPage(
        pageSize(q),
        q.cursor,
        (before, count) =>
          store.insights.listEvents(
            tenantId,
            {
              ...scope,
              ...(q.session === undefined ? {} : { session: q.session }),
              ...(q.decision === undefined ? {} : { decision: q.decision }),
              ...(q.actorType === undefined ? {} : { actorType: q.actorType }),
              ...(before ? { before: { createdAt: before.at, id: before.id } } : {}),
            },
            count,
          ),
        (e) => ({ at: e.createdAt, id: e.id }),
      );
      const items = page.map(
        (e): EventSummary => ({
          eventId: e.id,
          createdAt: iso(e.createdAt),
          action: e.action,
          surface: e.surface,
          session: e.session,
          decision: e.decision,
          wouldBeDecision: e.wouldBeDecision,
          actorType: e.actorType,
          confidence: e.confidence,
          risk: e.risk?.estimate ?? null,
          degraded: e.degraded,
          enforcementMode: e.enforcementMode,
        }),
      );
      if (q.format === "csv") {
        const columns = [
          "eventId",
          "createdAt",
          "action",
          "surface",
          "session",
          "decision",
          "wouldBeDecision",
          "actorType",
          "confidence",
          "risk",
          "degraded",
          "enforcementMode",
        ] as const;
        if (nextCursor) reply.header("x-next-cursor", nextCursor);
        return sendCsv(
          reply,
          "events",
          columns,
          items.map((r) => columns.map((c) => r[c])),
        );
      }
      return { items, nextCursor };
    },
  );

  app.get<{ Params: { eventId: string } }>(
    "/v1/events/:eventId",
    {
      ...route,
      schema: {
        summary:
          "One event in full: verdict, signals, principal, receipt claims, challenges and every observation",
        tags: ["insights"],
        params: {
          type: "object",
          properties: { eventId: { type: "string", maxLength: 128 } },
          required: ["eventId"],
        },
        response: { 200: EventView, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request) => {
      const view = await eventWithObservations(
        store,
        deps.tokens,
        requireCaller(request).tenant.id,
        request.params.eventId,
      );
      if (!view) throw new ApiError("unknown_event_id");
      return view;
    },
  );

  app.get<{ Querystring: PageQuery }>(
    "/v1/feedback/quarantined",
    {
      ...route,
      schema: schema(
        "Quarantined observations observed in the period, newest first, with what each conflicted with",
        PageQuery,
        QuarantinedPage,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const q = request.query;
      const scope = scopeOf(q, deps.clock());
      const { items: page, nextCursor } = await readPage(
        pageSize(q),
        q.cursor,
        (before, count) =>
          store.feedback.quarantined(
            tenantId,
            { since: scope.since, until: scope.until, ...(scope.action ? { action: scope.action } : {}) },
            count,
            before ? { receivedAt: before.at, feedbackId: before.id } : undefined,
          ),
        (q) => ({ at: q.observation.receivedAt, id: q.observation.feedbackId }),
      );
      const items = page.map((q) => ({
        observation: observationView(q.observation),
        conflictsWith: q.conflictsWith ? observationView(q.conflictsWith) : null,
      }));
      if (q.format === "csv") {
        if (nextCursor) reply.header("x-next-cursor", nextCursor);
        const columns = [
          "feedbackId",
          "eventId",
          "outcome",
          "value",
          "unit",
          "source",
          "observedAt",
          "receivedAt",
          "conflictsWith",
          "conflictingOutcome",
        ];
        return sendCsv(
          reply,
          "quarantined",
          columns,
          items.map(({ observation: o, conflictsWith: c }) => [
            o.feedbackId,
            o.eventId,
            o.outcome,
            o.value,
            o.unit,
            o.source,
            o.observedAt,
            o.receivedAt,
            o.conflictsWith,
            c?.outcome ?? null,
          ]),
        );
      }
      return { items, nextCursor };
    },
  );
}
