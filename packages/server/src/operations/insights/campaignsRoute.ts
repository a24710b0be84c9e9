import type { FastifyInstance } from "fastify";
import { ApiError } from "../../errors.js";
import { queryDate } from "../../http/queryDate.js";
import { ABUSE_OUTCOMES, GOOD_OUTCOMES } from "../feedback/conflicts.js";
import { versionLabel } from "../policy/applyDenyRule.js";
import { checkRule, denies, MARK_OF_LIST, type PolicyLists } from "../policy/denyRule.js";
import { CampaignsQuery, CampaignsReport, RuleWhatIfQuery, RuleWhatIfReport } from "./campaignSchema.js";
import { campaignsOf, sharedMarks } from "./campaigns.js";
import {
  admitRead,
  DAY_MS,
  type InsightRouteDeps,
  iso,
  numberIn,
  schema,
  scopeOf,
  scopeView,
} from "./readRoute.js";

/** The abusive attempts a campaigns read starts from, newest first. */
export const ABUSIVE_SETUPS_READ = 5_000;
/** A rule's what-if looks this far back by default. */
const RULE_WHAT_IF_DAYS = 30;

/**
 * The console's campaigns: what attempts later labelled abusive share (a page environment, a request
 * shape, a TLS fingerprint, a user agent, an email domain, a network), with how many attempts share it
 * without that label; and what a deny rule on one of them would have matched. Humans decide: applying
 * a rule is a write of its own (operations/policy).
 */
export function registerCampaignRoutes(
  app: FastifyInstance,
  deps: InsightRouteDeps,
  route: Pick<Parameters<FastifyInstance["get"]>[1] & object, "config" | "onRequest">,
): void {
  const { store } = deps;
  const outcomes = { abuse: ABUSE_OUTCOMES, good: GOOD_OUTCOMES };
  const policyOf = async (tenantId: string) => {
    const stored = await store.policies.current(tenantId);
    return {
      version: versionLabel(stored?.version ?? 0),
      document: stored ? (JSON.parse(stored.document) as PolicyLists) : {},
    };
  };

  app.get<{ Querystring: CampaignsQuery }>(
    "/v1/stats/campaigns",
    {
      ...route,
      schema: schema(
        "What attempts labelled abusive in the period share, with how many attempts share it unlabelled, and the deny list that would turn it away",
        CampaignsQuery,
        CampaignsReport,
      ),
    },
    async (request, reply) => {
      const scope = scopeOf(request.query, deps.clock());
      const limit = numberIn(request.query.limit, "limit", 1, 100, 20);
      const read = admitRead(request, reply, deps.budget, limit);
      const { tenantId, meter } = read;
      const setups = await store.insights.abusiveSetups(
        tenantId,
        scope,
        ABUSE_OUTCOMES,
        ABUSIVE_SETUPS_READ,
        meter,
      );
      const marks = sharedMarks(setups, limit);
      const [counts, policy] = await Promise.all([
        store.insights.markCounts(tenantId, scope, marks, outcomes, meter),
        policyOf(tenantId),
      ]);
      const rows = campaignsOf(counts, (list, value) => denies(policy.document, list, value))
        .slice(0, limit)
        .map((c) => ({ ...c, firstSeen: iso(c.firstSeen), lastSeen: iso(c.lastSeen) }));
      return read.table(
        rows,
        {
          name: "campaigns",
          columns: [
            "kind",
            "value",
            "labelled",
            "unlabelled",
            "good",
            "firstSeen",
            "lastSeen",
            "list",
            ["allow", (r) => r.decisions.allow],
            ["challenge", (r) => r.decisions.challenge],
            ["deny", (r) => r.decisions.deny],
            "listed",
          ],
        },
        () =>
          ({
            ...scopeView(tenantId, scope),
            abusiveAttempts: setups.length,
            truncated: setups.length === ABUSIVE_SETUPS_READ,
            policyVersion: policy.version,
            rows,
          }) satisfies CampaignsReport,
      );
    },
  );

  app.get<{ Querystring: RuleWhatIfQuery }>(
    "/v1/stats/what-if-rule",
    {
      ...route,
      schema: schema(
        "The attempts of the period (default the last 30 days) one more deny-list entry would have matched: their decisions and labels",
        RuleWhatIfQuery,
        RuleWhatIfReport,
      ),
    },
    async (request, reply) => {
      const q = request.query;
      const until = queryDate(q.until, "until") ?? deps.clock();
      const scope = scopeOf(
        { until: iso(until), since: q.since ?? iso(until - RULE_WHAT_IF_DAYS * DAY_MS) },
        until,
      );
      const rule = checkRule(q.list, q.value);
      if (!rule.ok) throw new ApiError("invalid_rule", rule.message);
      const read = admitRead(request, reply, deps.budget, 1);
      const { tenantId } = read;
      const [counts, policy] = await Promise.all([
        store.insights.markCounts(
          tenantId,
          scope,
          [{ kind: MARK_OF_LIST[q.list], value: rule.value }],
          outcomes,
          read.meter,
        ),
        policyOf(tenantId),
      ]);
      const decisions = { allow: 0, challenge: 0, deny: 0 };
      let events = 0;
      let abusive = 0;
      let good = 0;
      for (const c of counts) {
        decisions[c.decision] += c.events;
        events += c.events;
        abusive += c.abusive;
        good += c.good;
      }
      const { action: _, ...period } = scopeView(tenantId, scope);
      return read.json(
        {
          ...period,
          list: q.list,
          value: rule.value,
          events,
          decisions,
          newlyDenied: events - decisions.deny,
          abusive,
          good,
          unlabelled: events - abusive - good,
          policyVersion: policy.version,
          listed: denies(policy.document, q.list, rule.value),
        } satisfies RuleWhatIfReport,
        1,
      );
    },
  );
}
