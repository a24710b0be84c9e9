import type { FastifyInstance, FastifyReply, preHandlerHookHandler } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { requireCaller } from "../../http/auth.js";
import type { RouteSettings } from "../../http/types.js";
import type { Decision, EventScope, Store } from "../../store/interfaces.js";
import type { TokenSettings } from "../../tokens/verdictToken.js";
import { ABUSE_OUTCOMES } from "../feedback/conflicts.js";
import { eventWithObservations, observationView } from "../feedback/ledger.js";
import { EventView } from "../feedback/schema.js";
import { DEFAULT_COSTS, type DecisionCosts } from "../verify/decide.js";
import type { DecisionModel } from "../verify/decisionModel.js";
import { calibrationBins } from "./calibration.js";
import { toCsv } from "./csv.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { ReadCache } from "./readCache.js";
import {
  CalibrationQuery,
  CalibrationReport,
  ChallengesReport,
  DecisionsQuery,
  DecisionsReport,
  EventPage,
  type EventSummary,
  EventsQuery,
  OutcomesReport,
  PageQuery,
  QuarantinedPage,
  ScopeQuery,
  WhatIfQuery,
  WhatIfReport,
} from "./schema.js";
import { whatIf } from "./whatIf.js";

export interface InsightDeps {
  store: Store;
  clock: () => number;
  tokens: TokenSettings;
  model: DecisionModel;
}

const QUERY_FIELDS = [
  "since",
  "until",
  "action",
  "format",
  "bucket",
  "session",
  "decision",
  "actorType",
  "limit",
  "cursor",
  "bins",
  "falseAllow",
  "falseChallenge",
  "falseDeny",
] as const;

/** Read-only, tenant-scoped, ledger:read; the operator console's session cookie is accepted too. */
const settings: RouteSettings = {
  scope: "ledger:read",
  operation: "insights",
  onStoreFault: "store_unavailable",
  consoleSession: true,
  fieldCodes: Object.fromEntries(QUERY_FIELDS.map((f) => [f, "invalid_query"])),
};

const DAY_MS = 86_400_000;
/** How long the period-wide scans are reused (docs/console.md: figures are at most this old). */
export const RISK_GROUPS_TTL_MS = 10_000;
/** A page in JSON: small; a CSV download: one file holds a large export. */
const JSON_PAGE = { max: 500, fallback: 50 };
const CSV_PAGE = { max: 50_000, fallback: 50_000 };

/** A query number within [min, max], or `fallback` when absent; 400 invalid_query otherwise. */
function numberIn(
  text: string | undefined,
  name: string,
  min: number,
  max: number,
  fallback: number,
): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!(n >= min && n <= max)) throw new ApiError("invalid_query", `${name} must be from ${min} to ${max}.`);
  return n;
}
const pageSize = (q: { limit?: string; format?: "json" | "csv" }): number => {
  const page = q.format === "csv" ? CSV_PAGE : JSON_PAGE;
  return numberIn(q.limit, "limit", 1, page.max, page.fallback);
};
const DEFAULT_PERIOD_MS = 7 * DAY_MS;
const iso = (ms: number) => new Date(ms).toISOString();

/** The period asked for: until defaults to now, since to seven days before until. */
function scopeOf(query: { since?: string; until?: string; action?: string }, now: number): EventScope {
  const until = query.until === undefined ? now : Date.parse(query.until);
  const since = query.since === undefined ? until - DEFAULT_PERIOD_MS : Date.parse(query.since);
  if (!(since < until)) throw new ApiError("invalid_query", "since must be before until.");
  return { since, until, ...(query.action === undefined ? {} : { action: query.action }) };
}

const scopeView = (tenantId: string, scope: EventScope) => ({
  tenantId,
  since: iso(scope.since),
  until: iso(scope.until),
  action: scope.action ?? null,
});

function sendCsv(reply: FastifyReply, name: string, columns: readonly string[], rows: unknown[][]): string {
  reply.type("text/csv; charset=utf-8");
  reply.header("content-disposition", `attachment; filename="${name}.csv"`);
  return toCsv(columns, rows);
}

const schema = (summary: string, querystring: unknown, response: unknown) => ({
  summary: `${summary}. With format=csv the table is answered as text/csv.`,
  tags: ["insights"],
  querystring,
  response: { 200: response, "4xx": ErrorResponse, "5xx": ErrorResponse },
  security: [{ bearer: [] }],
});

/**
 * The operator console's data, part of the public API: decisions over time, challenge outcomes, the
 * event list and one event in full, decisions against outcomes, calibration and what-if. Every route
 * reads only the caller's tenant.
 */
export function registerInsights(
  app: FastifyInstance,
  deps: InsightDeps,
  hooks: { onRequest: preHandlerHookHandler[] },
): void {
  const { store } = deps;
  const route = { config: { warden: settings }, onRequest: hooks.onRequest };
  // The scans calibration, what-if and outcomes share, kept a few seconds per tenant and period.
  const cache = new ReadCache(RISK_GROUPS_TTL_MS, 64, deps.clock);
  const key = (kind: string, tenantId: string, scope: EventScope) =>
    JSON.stringify([kind, tenantId, scope.since, scope.until, scope.action ?? null]);
  const riskGroups = (tenantId: string, scope: EventScope) =>
    cache.get(key("risk", tenantId, scope), () => store.insights.riskGroups(tenantId, scope));
  const labelledRiskGroups = (tenantId: string, scope: EventScope) =>
    cache.get(key("labelled", tenantId, scope), () =>
      store.insights.labelledRiskGroups(tenantId, scope, ABUSE_OUTCOMES),
    );

  app.get<{ Querystring: DecisionsQuery }>(
    "/v1/stats/decisions",
    {
      ...route,
      schema: schema(
        "Decisions over time by action, decision, actorType, degraded and enforcementMode",
        DecisionsQuery,
        DecisionsReport,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const scope = scopeOf(request.query, deps.clock());
      const bucket = request.query.bucket ?? (scope.until - scope.since <= 3 * DAY_MS ? "hour" : "day");
      const rows = (await store.insights.decisionCounts(tenantId, scope, bucket)).map(
        ({ bucketStart, ...r }) => ({
          bucketStart: iso(bucketStart),
          ...r,
        }),
      );
      if (request.query.format === "csv") {
        const columns = [
          "bucketStart",
          "action",
          "decision",
          "actorType",
          "degraded",
          "enforcementMode",
          "count",
        ] as const;
        return sendCsv(
          reply,
          "decisions",
          columns,
          rows.map((r) => columns.map((c) => r[c])),
        );
      }
      return { ...scopeView(tenantId, scope), bucket, rows } satisfies DecisionsReport;
    },
  );

  app.get<{ Querystring: ScopeQuery }>(
    "/v1/stats/challenges",
    {
      ...route,
      schema: schema(
        "Challenges issued in the period by method: cleared, expired, open, redeemed",
        ScopeQuery,
        ChallengesReport,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const now = deps.clock();
      const scope = scopeOf(request.query, now);
      const rows = (await store.insights.challengeCounts(tenantId, scope, now)).map((c) => ({
        ...c,
        open: c.issued - c.cleared - c.expired,
      }));
      if (request.query.format === "csv") {
        const columns = ["method", "issued", "cleared", "expired", "open", "redeemed"] as const;
        return sendCsv(
          reply,
          "challenges",
          columns,
          rows.map((r) => columns.map((c) => r[c])),
        );
      }
      return { ...scopeView(tenantId, scope), rows };
    },
  );

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
      const limit = pageSize(q);
      const before = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      const events = await store.insights.listEvents(
        tenantId,
        {
          ...scope,
          ...(q.session === undefined ? {} : { session: q.session }),
          ...(q.decision === undefined ? {} : { decision: q.decision }),
          ...(q.actorType === undefined ? {} : { actorType: q.actorType }),
          ...(before ? { before: { createdAt: before.at, id: before.id } } : {}),
        },
        limit + 1,
      );
      const page = events.slice(0, limit);
      const last = page[page.length - 1];
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
      const nextCursor =
        events.length > limit && last ? encodeCursor({ at: last.createdAt, id: last.id }) : null;
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

  app.get<{ Querystring: ScopeQuery }>(
    "/v1/stats/outcomes",
    {
      ...route,
      schema: schema(
        "Effective outcomes on the period's events by the engine's decision",
        ScopeQuery,
        OutcomesReport,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const scope = scopeOf(request.query, deps.clock());
      const filter = {
        since: scope.since,
        until: scope.until,
        ...(scope.action ? { action: scope.action } : {}),
      };
      const [rows, groups, ledger] = await Promise.all([
        store.insights.outcomeCounts(tenantId, scope),
        riskGroups(tenantId, scope),
        store.feedback.aggregate(tenantId, filter),
      ]);
      if (request.query.format === "csv") {
        const columns = ["decision", "outcome", "events", "observations"] as const;
        return sendCsv(
          reply,
          "outcomes",
          columns,
          rows.map((r) => columns.map((c) => r[c])),
        );
      }
      const decisions: Record<Decision, number> = { allow: 0, challenge: 0, deny: 0 };
      for (const g of groups) decisions[g.decision] += g.count;
      const quarantinedCount = ledger
        .filter((r) => r.status === "quarantined")
        .reduce((n, r) => n + r.count, 0);
      return { ...scopeView(tenantId, scope), rows, decisions, quarantinedCount };
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
      const limit = pageSize(q);
      const before = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      const found = await store.feedback.quarantined(
        tenantId,
        { since: scope.since, until: scope.until, ...(scope.action ? { action: scope.action } : {}) },
        limit + 1,
        before ? { receivedAt: before.at, feedbackId: before.id } : undefined,
      );
      const page = found.slice(0, limit);
      const last = page[page.length - 1]?.observation;
      const nextCursor =
        found.length > limit && last ? encodeCursor({ at: last.receivedAt, id: last.feedbackId }) : null;
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

  app.get<{ Querystring: CalibrationQuery }>(
    "/v1/stats/calibration",
    {
      ...route,
      schema: schema(
        "Estimated abuse risk in bins against the observed abuse rate (a reliability diagram)",
        CalibrationQuery,
        CalibrationReport,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const scope = scopeOf(request.query, deps.clock());
      const [groups, labelled] = await Promise.all([
        riskGroups(tenantId, scope),
        labelledRiskGroups(tenantId, scope),
      ]);
      const bins = calibrationBins(groups, labelled, numberIn(request.query.bins, "bins", 2, 50, 10));
      if (request.query.format === "csv") {
        return sendCsv(
          reply,
          "calibration",
          [
            "low",
            "high",
            "events",
            "labelled",
            "abusive",
            "meanRisk",
            "observedRate",
            "intervalLow",
            "intervalHigh",
          ],
          bins.map((b) => [
            b.low,
            b.high,
            b.events,
            b.labelled,
            b.abusive,
            b.meanRisk,
            b.observedRate,
            b.interval?.low,
            b.interval?.high,
          ]),
        );
      }
      const sum = (f: (b: (typeof bins)[number]) => number) => bins.reduce((n, b) => n + f(b), 0);
      return {
        ...scopeView(tenantId, scope),
        bins,
        events: sum((b) => b.events),
        labelled: sum((b) => b.labelled),
        abusive: sum((b) => b.abusive),
      };
    },
  );

  app.get<{ Querystring: WhatIfQuery }>(
    "/v1/stats/what-if",
    {
      ...route,
      schema: schema(
        "The period's decisions replayed under other decisionCosts, with the policy that would apply them",
        WhatIfQuery,
        WhatIfReport,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const q = request.query;
      const scope = scopeOf(q, deps.clock());
      const [groups, labelled, stored] = await Promise.all([
        riskGroups(tenantId, scope),
        labelledRiskGroups(tenantId, scope),
        store.policies.current(tenantId),
      ]);
      const document = stored ? (JSON.parse(stored.document) as PolicyDocument) : {};
      // Where a weight is not asked for, the replay starts from what verify uses today.
      const currentCosts = currentCostsOf(document, scope.action);
      const weight = (text: string | undefined, name: keyof DecisionCosts) =>
        numberIn(text, name, Number.MIN_VALUE, 1_000_000, currentCosts[name]);
      const costs = {
        falseAllow: weight(q.falseAllow, "falseAllow"),
        falseChallenge: weight(q.falseChallenge, "falseChallenge"),
        falseDeny: weight(q.falseDeny, "falseDeny"),
      };
      const result = whatIf(groups, labelled, costs, deps.model);
      if (q.format === "csv") {
        return sendCsv(
          reply,
          "what-if",
          ["decision", "recorded", "whatIf"],
          (["allow", "challenge", "deny"] as const).map((d) => [d, result.recorded[d], result.whatIf[d]]),
        );
      }
      return {
        ...scopeView(tenantId, scope),
        ...result,
        currentCosts,
        policy: withCosts(document, costs, scope.action),
      };
    },
  );
}

type PolicyDocument = Record<string, unknown> & {
  decisionCosts?: Partial<DecisionCosts>;
  actions?: Record<string, Record<string, unknown> & { decisionCosts?: Partial<DecisionCosts> }>;
};

/**
 * The weights verify uses today for a request that sends none: the action's, then the tenant's, then
 * the spec's defaults (the same precedence as verify's resolveCosts with the tenant policy).
 */
function currentCostsOf(document: PolicyDocument, action: string | undefined): DecisionCosts {
  const forAction = action === undefined ? undefined : document.actions?.[action]?.decisionCosts;
  return { ...DEFAULT_COSTS, ...document.decisionCosts, ...forAction };
}

/** The tenant's document with the weights set: for the action when the period was one action's. */
function withCosts(
  document: PolicyDocument,
  costs: DecisionCosts,
  action: string | undefined,
): PolicyDocument {
  if (action === undefined) return { ...document, decisionCosts: costs };
  const actions = document.actions ?? {};
  return { ...document, actions: { ...actions, [action]: { ...actions[action], decisionCosts: costs } } };
}
