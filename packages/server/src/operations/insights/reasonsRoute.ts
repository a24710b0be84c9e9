import type { FastifyInstance } from "fastify";
import { ErrorResponse } from "../../errors.js";
import type { EventScope, ReadMeter, ReasonCount } from "../../store/interfaces.js";
import { REASON_CODES, type ReasonCode } from "../verify/reasonCodes.js";
import { admitRead, type InsightRouteDeps, schema, scopeOf, scopeView } from "./readRoute.js";
import { ActionsReport, ReasonsReport, ScopeQuery } from "./schema.js";

type ReasonRow = ReasonsReport["rows"][number];

/**
 * The store's counts per code and decision as one row per code (its category from the catalogue,
 * reasonCodes.ts), most events first. A code no longer in the catalogue is left out: the answer
 * names only codes a filter accepts.
 */
export function reasonRows(counts: readonly ReasonCount[]): ReasonRow[] {
  const rows = new Map<string, ReasonRow>();
  for (const c of counts) {
    const category = REASON_CODES[c.code as ReasonCode];
    if (category === undefined) continue;
    let row = rows.get(c.code);
    if (!row) {
      row = {
        code: c.code as ReasonCode,
        category,
        events: 0,
        decisions: { allow: 0, challenge: 0, deny: 0 },
      };
      rows.set(c.code, row);
    }
    row.events += c.count;
    row.decisions[c.decision] += c.count;
  }
  return [...rows.values()].sort((a, b) => b.events - a.events || a.code.localeCompare(b.code));
}

/** What the console groups and filters by: events per reason code, and the tenant's actions. */
export function registerReasonRoutes(
  app: FastifyInstance,
  deps: InsightRouteDeps & {
    /** The store's reasonCounts, through the period-wide scans' cache (route.ts). */
    reasonCounts(tenantId: string, scope: EventScope, meter: ReadMeter): Promise<ReasonCount[]>;
  },
  route: Pick<Parameters<FastifyInstance["get"]>[1] & object, "config" | "onRequest">,
): void {
  const { store } = deps;
  app.get<{ Querystring: ScopeQuery }>(
    "/v1/stats/reasons",
    {
      ...route,
      schema: schema(
        "Events of the period per reason code (an event counts once per code it gave), with its category and the decisions given",
        ScopeQuery,
        ReasonsReport,
      ),
    },
    async (request, reply) => {
      const scope = scopeOf(request.query, deps.clock());
      const read = admitRead(request, reply, deps.budget, 1);
      const rows = reasonRows(await deps.reasonCounts(read.tenantId, scope, read.meter));
      return read.table(
        rows,
        {
          name: "reasons",
          columns: [
            "code",
            "category",
            "events",
            ["allow", (r) => r.decisions.allow],
            ["challenge", (r) => r.decisions.challenge],
            ["deny", (r) => r.decisions.deny],
          ],
        },
        () => ({ ...scopeView(read.tenantId, scope), rows }),
      );
    },
  );

  app.get(
    "/v1/stats/actions",
    {
      ...route,
      schema: {
        summary: "Every action the tenant has events for, in order: the values the action filter takes",
        tags: ["insights"],
        response: { 200: ActionsReport, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request, reply) => {
      const read = admitRead(request, reply, deps.budget, 1);
      const actions = await store.insights.knownActions(read.tenantId, read.meter);
      return read.json({ tenantId: read.tenantId, actions }, actions.length);
    },
  );
}
