import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import type { Decision, DecisionCosts } from "../../domain.js";
import { requireCaller } from "../../http/auth.js";
import type { EventScope, ReadMeter } from "../../store/interfaces.js";
import { ABUSE_OUTCOMES } from "../feedback/conflicts.js";
import { DEFAULT_COSTS } from "../verify/decide.js";
import { registerAttemptRoutes } from "./attemptsRoute.js";
import { calibrationBins } from "./calibration.js";
import { registerCampaignRoutes } from "./campaignsRoute.js";
import { registerEventRoutes } from "./eventsRoute.js";
import { ReadBudget } from "./readBudget.js";
import { ReadCache } from "./readCache.js";
import {
  admitRead,
  bucketFor,
  type InsightDeps,
  iso,
  mapInTurns,
  numberIn,
  schema,
  scopeOf,
  scopeView,
  sendCsv,
  settings,
} from "./readRoute.js";
import { registerReasonRoutes } from "./reasonsRoute.js";
import {
  CalibrationQuery,
  CalibrationReport,
  ChallengesReport,
  DecisionsQuery,
  DecisionsReport,
  OutcomesReport,
  ScopeQuery,
  WhatIfQuery,
  WhatIfReport,
} from "./schema.js";
import { whatIf } from "./whatIf.js";

/** How long the period-wide scans are reused (docs/console.md: figures are at most this old). */
export const RISK_GROUPS_TTL_MS = 10_000;

/**
 * The operator console's data, part of the public API: decisions over time, challenge outcomes, the
 * event list and one event in full, decisions against outcomes, calibration and what-if. Every route
 * reads only the caller's tenant.
 */
export function registerInsights(
  app: FastifyInstance,
  insightDeps: InsightDeps,
  hooks: { onRequest: preHandlerHookHandler[] },
): void {
  const deps = {
    ...insightDeps,
    budget: new ReadBudget(
      insightDeps.readRowsPerMinute,
      insightDeps.clock,
      insightDeps.readStoreMsPerMinute,
    ),
  };
  const { store } = deps;
  const route = { config: { warden: settings }, onRequest: hooks.onRequest };
  // The period-wide scans (calibration, what-if and outcomes share two; the reason counts unpack
  // every event's codes), kept a few seconds per tenant and period.
  const cache = new ReadCache(RISK_GROUPS_TTL_MS, 64, deps.clock);
  const key = (kind: string, tenantId: string, scope: EventScope) =>
    JSON.stringify([kind, tenantId, scope.since, scope.until, scope.action ?? null]);
  // A scan is charged to the read that made it; reads answered from the cache cost the store nothing.
  const reasonCounts = (tenantId: string, scope: EventScope, meter: ReadMeter) =>
    cache.get(key("reasons", tenantId, scope), () => store.insights.reasonCounts(tenantId, scope, meter));
  registerEventRoutes(app, deps, route);
  registerReasonRoutes(app, { ...deps, reasonCounts }, route);
  registerAttemptRoutes(app, deps, route);
  registerCampaignRoutes(app, deps, route);
  const riskGroups = (tenantId: string, scope: EventScope, meter: ReadMeter) =>
    cache.get(key("risk", tenantId, scope), () => store.insights.riskGroups(tenantId, scope, meter));
  const labelledRiskGroups = (tenantId: string, scope: EventScope, meter: ReadMeter) =>
    cache.get(key("labelled", tenantId, scope), () =>
      store.insights.labelledRiskGroups(tenantId, scope, ABUSE_OUTCOMES, meter),
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
      const ticket = admitRead(request, reply, deps.budget, 1);
      const bucket = bucketFor(request.query.bucket, scope);
      const rows = await mapInTurns(
        await store.insights.decisionCounts(tenantId, scope, bucket, ticket.meter),
        ({ bucketStart, ...r }) => ({ bucketStart: iso(bucketStart), ...r }),
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
          await mapInTurns(rows, (r) => columns.map((c) => r[c])),
          ticket,
        );
      }
      ticket.add(rows.length);
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
      const ticket = admitRead(request, reply, deps.budget, 1);
      const rows = (await store.insights.challengeCounts(tenantId, scope, now, ticket.meter)).map((c) => ({
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
          ticket,
        );
      }
      ticket.add(rows.length);
      return { ...scopeView(tenantId, scope), rows };
    },
  );

  app.get<{ Querystring: ScopeQuery }>(
    "/v1/stats/outcomes",
    {
      ...route,
      schema: schema(
        "Effective outcomes on the period's attempts (on any of their events) by the engine's first scored decision",
        ScopeQuery,
        OutcomesReport,
      ),
    },
    async (request, reply) => {
      const tenantId = requireCaller(request).tenant.id;
      const scope = scopeOf(request.query, deps.clock());
      const ticket = admitRead(request, reply, deps.budget, 1);
      const filter = {
        since: scope.since,
        until: scope.until,
        ...(scope.action ? { action: scope.action } : {}),
      };
      const [rows, groups, ledger] = await Promise.all([
        store.insights.outcomeCounts(tenantId, scope, ticket.meter),
        riskGroups(tenantId, scope, ticket.meter),
        store.feedback.aggregate(tenantId, filter),
      ]);
      if (request.query.format === "csv") {
        const columns = ["decision", "outcome", "events", "observations"] as const;
        return sendCsv(
          reply,
          "outcomes",
          columns,
          rows.map((r) => columns.map((c) => r[c])),
          ticket,
        );
      }
      ticket.add(rows.length);
      const decisions: Record<Decision, number> = { allow: 0, challenge: 0, deny: 0 };
      for (const g of groups) decisions[g.decision] += g.count;
      const quarantinedCount = ledger
        .filter((r) => r.status === "quarantined")
        .reduce((n, r) => n + r.count, 0);
      return { ...scopeView(tenantId, scope), rows, decisions, quarantinedCount };
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
      const ticket = admitRead(request, reply, deps.budget, 1);
      const [groups, labelled] = await Promise.all([
        riskGroups(tenantId, scope, ticket.meter),
        labelledRiskGroups(tenantId, scope, ticket.meter),
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
          ticket,
        );
      }
      ticket.add(bins.length);
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
      const ticket = admitRead(request, reply, deps.budget, 1);
      const [groups, labelled, stored] = await Promise.all([
        riskGroups(tenantId, scope, ticket.meter),
        labelledRiskGroups(tenantId, scope, ticket.meter),
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
          ticket,
        );
      }
      ticket.add(3);
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
 * the built-in defaults (the same precedence as verify's resolveCosts with the tenant policy).
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
