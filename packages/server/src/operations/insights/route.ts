import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { DECISIONS, type Decision, type DecisionCosts } from "../../domain.js";
import { compileStored } from "../../policy/tenantPolicy.js";
import type { EventScope, ReadMeter } from "../../store/interfaces.js";
import { ABUSE_OUTCOMES } from "../feedback/conflicts.js";
import { resolveCosts } from "../verify/decide.js";
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
      const scope = scopeOf(request.query, deps.clock());
      const read = admitRead(request, reply, deps.budget, 1);
      const bucket = bucketFor(request.query.bucket, scope);
      const rows = await mapInTurns(
        await store.insights.decisionCounts(read.tenantId, scope, bucket, read.meter),
        ({ bucketStart, ...r }) => ({ bucketStart: iso(bucketStart), ...r }),
      );
      return read.table(
        rows,
        {
          name: "decisions",
          columns: ["bucketStart", "action", "decision", "actorType", "degraded", "enforcementMode", "count"],
        },
        () => ({ ...scopeView(read.tenantId, scope), bucket, rows }) satisfies DecisionsReport,
      );
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
      const now = deps.clock();
      const scope = scopeOf(request.query, now);
      const read = admitRead(request, reply, deps.budget, 1);
      const rows = (await store.insights.challengeCounts(read.tenantId, scope, now, read.meter)).map((c) => ({
        ...c,
        open: c.issued - c.cleared - c.expired,
      }));
      return read.table(
        rows,
        { name: "challenges", columns: ["method", "issued", "cleared", "expired", "open", "redeemed"] },
        () => ({ ...scopeView(read.tenantId, scope), rows }),
      );
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
      const scope = scopeOf(request.query, deps.clock());
      const read = admitRead(request, reply, deps.budget, 1);
      const { tenantId } = read;
      const filter = {
        since: scope.since,
        until: scope.until,
        ...(scope.action ? { action: scope.action } : {}),
      };
      const [rows, groups, ledger] = await Promise.all([
        store.insights.outcomeCounts(tenantId, scope, read.meter),
        riskGroups(tenantId, scope, read.meter),
        store.feedback.aggregate(tenantId, filter),
      ]);
      return read.table(
        rows,
        { name: "outcomes", columns: ["decision", "outcome", "events", "observations"] },
        () => {
          const decisions: Record<Decision, number> = { allow: 0, challenge: 0, deny: 0 };
          for (const g of groups) decisions[g.decision] += g.count;
          const quarantinedCount = ledger
            .filter((r) => r.status === "quarantined")
            .reduce((n, r) => n + r.count, 0);
          return { ...scopeView(tenantId, scope), rows, decisions, quarantinedCount };
        },
      );
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
      const scope = scopeOf(request.query, deps.clock());
      const read = admitRead(request, reply, deps.budget, 1);
      const [groups, labelled] = await Promise.all([
        riskGroups(read.tenantId, scope, read.meter),
        labelledRiskGroups(read.tenantId, scope, read.meter),
      ]);
      const bins = calibrationBins(groups, labelled, numberIn(request.query.bins, "bins", 2, 50, 10));
      const sum = (f: (b: (typeof bins)[number]) => number) => bins.reduce((n, b) => n + f(b), 0);
      return read.table(
        bins,
        {
          name: "calibration",
          columns: [
            "low",
            "high",
            "events",
            "labelled",
            "abusive",
            "meanRisk",
            "observedRate",
            ["intervalLow", (b) => b.interval?.low],
            ["intervalHigh", (b) => b.interval?.high],
          ],
        },
        () => ({
          ...scopeView(read.tenantId, scope),
          bins,
          events: sum((b) => b.events),
          labelled: sum((b) => b.labelled),
          abusive: sum((b) => b.abusive),
        }),
      );
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
      const q = request.query;
      const scope = scopeOf(q, deps.clock());
      const read = admitRead(request, reply, deps.budget, 1);
      const [groups, labelled, stored] = await Promise.all([
        riskGroups(read.tenantId, scope, read.meter),
        labelledRiskGroups(read.tenantId, scope, read.meter),
        store.policies.current(read.tenantId),
      ]);
      // Where a weight is not asked for, the replay starts from what verify uses today: the stored
      // version as verify applies it, its costs resolved as verify resolves them.
      const currentCosts = resolveCosts(undefined, compileStored(stored).policy.decisionCosts(scope.action));
      const weight = (text: string | undefined, name: keyof DecisionCosts) =>
        numberIn(text, name, Number.MIN_VALUE, 1_000_000, currentCosts[name]);
      const costs = {
        falseAllow: weight(q.falseAllow, "falseAllow"),
        falseChallenge: weight(q.falseChallenge, "falseChallenge"),
        falseDeny: weight(q.falseDeny, "falseDeny"),
      };
      const result = whatIf(groups, labelled, costs, deps.model);
      const rows = DECISIONS.map((decision) => ({
        decision,
        recorded: result.recorded[decision],
        whatIf: result.whatIf[decision],
      }));
      return read.table(rows, { name: "what-if", columns: ["decision", "recorded", "whatIf"] }, () => ({
        ...scopeView(read.tenantId, scope),
        ...result,
        currentCosts,
        policy: withCosts(stored ? (JSON.parse(stored.document) as PolicyDocument) : {}, costs, scope.action),
      }));
    },
  );
}

type PolicyDocument = Record<string, unknown> & {
  decisionCosts?: Partial<DecisionCosts>;
  actions?: Record<string, Record<string, unknown> & { decisionCosts?: Partial<DecisionCosts> }>;
};

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
