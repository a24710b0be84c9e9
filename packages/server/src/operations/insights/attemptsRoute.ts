import type { FastifyInstance } from "fastify";
import type { AttemptEnding, Decision } from "../../domain.js";
import { ApiError, ErrorResponse } from "../../errors.js";
import { eventWithObservations } from "../feedback/ledger.js";
import type { EventView } from "../feedback/schema.js";
import {
  admitRead,
  bucketFor,
  type InsightRouteDeps,
  iso,
  mapInTurns,
  schema,
  scopeOf,
  scopeView,
} from "./readRoute.js";
import { AttemptsReport, AttemptView, DecisionsQuery } from "./schema.js";

/**
 * How an attempt with this first verdict and re-verify ended (the store's attemptCounts says the same
 * per hour): a re-verify that a degraded verdict's clear let be scored may have been a deny.
 */
function endingOf(
  first: EventView,
  reverifyEventId: string | null,
  reverify: EventView | undefined,
): AttemptEnding {
  const decision = first.event.decision as Decision;
  if (decision === "allow") return "allowed";
  if (decision === "deny" || reverify?.event.decision === "deny") return "denied";
  const redeemed = reverifyEventId !== null || first.challenges.some((c) => c.redeemedAt !== null);
  return redeemed ? "cleared" : "challenged";
}

/**
 * Attempts (docs/api.md, "Attempts"): counted by how they ended, and one attempt in full from any of
 * its events. Verify's events stay as they are; an attempt groups them.
 */
export function registerAttemptRoutes(
  app: FastifyInstance,
  deps: InsightRouteDeps,
  route: Pick<Parameters<FastifyInstance["get"]>[1] & object, "config" | "onRequest">,
): void {
  const { store } = deps;
  app.get<{ Querystring: DecisionsQuery }>(
    "/v1/stats/attempts",
    {
      ...route,
      schema: schema(
        "Attempts over time by action and how they ended: allowed at once, challenged then cleared, challenged and not cleared, denied",
        DecisionsQuery,
        AttemptsReport,
      ),
    },
    async (request, reply) => {
      const scope = scopeOf(request.query, deps.clock());
      const read = admitRead(request, reply, deps.budget, 1);
      const bucket = bucketFor(request.query.bucket, scope);
      const rows = await mapInTurns(
        await store.insights.attemptCounts(read.tenantId, scope, bucket, read.meter),
        ({ bucketStart, ...r }) => ({ bucketStart: iso(bucketStart), ...r }),
      );
      return read.table(
        rows,
        { name: "attempts", columns: ["bucketStart", "action", "ending", "degraded", "count"] },
        () => ({ ...scopeView(read.tenantId, scope), bucket, rows }) satisfies AttemptsReport,
      );
    },
  );

  app.get<{ Params: { eventId: string } }>(
    "/v1/attempts/:eventId",
    {
      ...route,
      schema: {
        summary:
          "The attempt an event belongs to: its first verdict and the re-verify that redeemed its clear, each with its challenges and observations",
        tags: ["insights"],
        params: {
          type: "object",
          properties: { eventId: { type: "string", maxLength: 128 } },
          required: ["eventId"],
        },
        response: { 200: AttemptView, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request, reply) => {
      const { tenantId } = admitRead(request, reply, deps.budget, 2);
      const links = await store.insights.attemptOf(tenantId, request.params.eventId);
      if (!links) throw new ApiError("unknown_event_id");
      const [first, reverify] = await Promise.all([
        eventWithObservations(store, deps.tokens, tenantId, links.firstEventId),
        links.reverifyEventId === null
          ? undefined
          : eventWithObservations(store, deps.tokens, tenantId, links.reverifyEventId),
      ]);
      if (!first) throw new ApiError("unknown_event_id");
      return {
        firstEventId: links.firstEventId,
        reverifyEventId: links.reverifyEventId,
        ending: endingOf(first, links.reverifyEventId, reverify),
        first,
        reverify: reverify ?? null,
      } satisfies AttemptView;
    },
  );
}
