import type { FastifyInstance } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import type { EventListFilter, EventListItem } from "../../store/interfaces.js";
import { eventWithObservations, observationView } from "../feedback/ledger.js";
import { EventView, type ObservationView } from "../feedback/schema.js";
import { type Cursor, decodeCursor, encodeCursor, readPage, readPages } from "./cursor.js";
import { eventFilterOf } from "./eventSearch.js";
import {
  admitRead,
  type CsvTable,
  type InsightRouteDeps,
  iso,
  pageSize,
  schema,
  scopeOf,
  turn,
} from "./readRoute.js";
import { EventPage, type EventSummary, EventsQuery, PageQuery, QuarantinedPage } from "./schema.js";

/** The events export's CSV columns: the summary's fields in its order. */
export const EVENT_CSV_COLUMNS = [
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

const eventSummary = (e: EventListItem): EventSummary => ({
  eventId: e.id,
  createdAt: iso(e.createdAt),
  action: e.action,
  surface: e.surface,
  session: e.session,
  decision: e.decision,
  wouldBeDecision: e.wouldBeDecision,
  actorType: e.actorType,
  confidence: e.confidence,
  risk: e.riskEstimate,
  degraded: e.degraded,
  enforcementMode: e.enforcementMode,
});

/** The export's CSV rows (EVENT_CSV_COLUMNS, the summary's fields in its order), read by read. */
async function* eventRows(pages: AsyncIterable<EventListItem[]>): AsyncGenerator<unknown[][]> {
  for await (const page of pages) {
    yield page.map((e) => [
      e.id,
      iso(e.createdAt),
      e.action,
      e.surface,
      e.session,
      e.decision,
      e.wouldBeDecision,
      e.actorType,
      e.confidence,
      e.riskEstimate,
      e.degraded,
      e.enforcementMode,
    ]);
  }
}

type QuarantinedItem = { observation: ObservationView; conflictsWith: ObservationView | null };

/** The quarantined observations' CSV: each observation, and the outcome of the one it conflicts with. */
const QUARANTINED_CSV: CsvTable<QuarantinedItem> = {
  name: "quarantined",
  columns: [
    ["feedbackId", (i) => i.observation.feedbackId],
    ["eventId", (i) => i.observation.eventId],
    ["outcome", (i) => i.observation.outcome],
    ["value", (i) => i.observation.value],
    ["unit", (i) => i.observation.unit],
    ["source", (i) => i.observation.source],
    ["observedAt", (i) => i.observation.observedAt],
    ["receivedAt", (i) => i.observation.receivedAt],
    ["conflictsWith", (i) => i.observation.conflictsWith],
    ["conflictingOutcome", (i) => i.conflictsWith?.outcome ?? null],
  ],
};

/** The lists (events, quarantined observations; paginated) and one event in full. */
export function registerEventRoutes(
  app: FastifyInstance,
  deps: InsightRouteDeps,
  route: Pick<Parameters<FastifyInstance["get"]>[1] & object, "config" | "onRequest">,
): void {
  const { store } = deps;
  app.get<{ Querystring: EventsQuery }>(
    "/v1/events",
    {
      ...route,
      schema: schema(
        "Events of the period, newest first, paginated; by session, decision, actorType, emailHash, network, reasonCode or degraded",
        EventsQuery,
        EventPage,
      ),
    },
    async (request, reply) => {
      const q = request.query;
      const filter = eventFilterOf(q, deps.clock());
      const limit = pageSize(q);
      const start = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      const admitted = admitRead(request, reply, deps.budget, limit);
      const { tenantId, meter } = admitted;
      const after = (c: Cursor | undefined): EventListFilter =>
        c ? { ...filter, before: { createdAt: c.at, id: c.id } } : filter;
      const read = (before: Cursor | undefined, count: number) =>
        store.insights.listEvents(tenantId, after(before), count, meter);
      const position = (e: EventListItem): Cursor => ({ at: e.createdAt, id: e.id });
      if (admitted.csv) {
        // The header goes before the rows: the cursor after the export's last row is read first
        // (positions only), then the rows are streamed through it, read by read.
        const [last, beyond] = await store.insights.eventPositions(
          tenantId,
          after(start),
          limit - 1,
          2,
          meter,
        );
        const through = last && beyond ? { at: last.createdAt, id: last.id } : undefined;
        if (through) reply.header("x-next-cursor", encodeCursor(through));
        const pages = readPages({ limit: Number.MAX_SAFE_INTEGER, start, read, position, through });
        return admitted.sendCsv("events", EVENT_CSV_COLUMNS, eventRows(pages));
      }
      const { items, nextCursor } = await readPage(limit, q.cursor, read, position);
      return admitted.json({ items: items.map(eventSummary), nextCursor }, items.length);
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
    async (request, reply) => {
      const { tenantId } = admitRead(request, reply, deps.budget, 1);
      const view = await eventWithObservations(store, deps.tokens, tenantId, request.params.eventId);
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
      const q = request.query;
      const scope = scopeOf(q, deps.clock());
      const limit = pageSize(q);
      const admitted = admitRead(request, reply, deps.budget, limit);
      const { tenantId } = admitted;
      const pages = readPages({
        limit,
        start: q.cursor === undefined ? undefined : decodeCursor(q.cursor),
        read: (before, count) =>
          store.feedback.quarantined(
            tenantId,
            { since: scope.since, until: scope.until, ...(scope.action ? { action: scope.action } : {}) },
            count,
            before ? { receivedAt: before.at, feedbackId: before.id } : undefined,
          ),
        position: (q) => ({ at: q.observation.receivedAt, id: q.observation.feedbackId }),
      });
      // Read by read (the loop turns between them); the cursor is known once the last is read, so
      // the CSV is sent after them (quarantined observations are few; the text is still formatted
      // in chunks, streamed).
      const items: QuarantinedItem[] = [];
      let read = await pages.next();
      while (!read.done) {
        for (const q of read.value) {
          items.push({
            observation: observationView(q.observation),
            conflictsWith: q.conflictsWith ? observationView(q.conflictsWith) : null,
          });
        }
        await turn();
        read = await pages.next();
      }
      const nextCursor = read.value;
      if (nextCursor && admitted.csv) reply.header("x-next-cursor", nextCursor);
      return admitted.table(items, QUARANTINED_CSV, () => ({ items, nextCursor }));
    },
  );
}
