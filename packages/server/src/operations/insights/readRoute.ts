import type { FastifyReply } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { queryDate } from "../../http/queryDate.js";
import type { RouteSettings } from "../../http/types.js";
import type { EventScope, Store } from "../../store/interfaces.js";
import type { TokenSettings } from "../../tokens/verdictToken.js";
import type { DecisionModel } from "../verify/decisionModel.js";
import { toCsv } from "./csv.js";

export interface InsightDeps {
  store: Store;
  clock: () => number;
  tokens: TokenSettings;
  model: DecisionModel;
}

/** What every console read shares: its settings, the period and page it asks for, its CSV answer. */
export const QUERY_FIELDS = [
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
export const settings: RouteSettings = {
  scope: "ledger:read",
  operation: "insights",
  onStoreFault: "store_unavailable",
  consoleSession: true,
  fieldCodes: Object.fromEntries(QUERY_FIELDS.map((f) => [f, "invalid_query"])),
};

export const DAY_MS = 86_400_000;
/** A page in JSON: small; a CSV download: one file holds a large export. */
const JSON_PAGE = { max: 500, fallback: 50 };
const CSV_PAGE = { max: 50_000, fallback: 50_000 };

/** A query number within [min, max], or `fallback` when absent; 400 invalid_query otherwise. */
export function numberIn(
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
export const pageSize = (q: { limit?: string; format?: "json" | "csv" }): number => {
  const page = q.format === "csv" ? CSV_PAGE : JSON_PAGE;
  return numberIn(q.limit, "limit", 1, page.max, page.fallback);
};
const DEFAULT_PERIOD_MS = 7 * DAY_MS;
export const iso = (ms: number) => new Date(ms).toISOString();

/** The period asked for: until defaults to now, since to seven days before until. */
export function scopeOf(query: { since?: string; until?: string; action?: string }, now: number): EventScope {
  const until = queryDate(query.until, "until") ?? now;
  const since = queryDate(query.since, "since") ?? until - DEFAULT_PERIOD_MS;
  if (!(since < until)) throw new ApiError("invalid_query", "since must be before until.");
  return { since, until, ...(query.action === undefined ? {} : { action: query.action }) };
}

export const scopeView = (tenantId: string, scope: EventScope) => ({
  tenantId,
  since: iso(scope.since),
  until: iso(scope.until),
  action: scope.action ?? null,
});

export function sendCsv(
  reply: FastifyReply,
  name: string,
  columns: readonly string[],
  rows: unknown[][],
): string {
  reply.type("text/csv; charset=utf-8");
  reply.header("content-disposition", `attachment; filename="${name}.csv"`);
  return toCsv(columns, rows);
}

export const schema = (summary: string, querystring: unknown, response: unknown) => ({
  summary: `${summary}. With format=csv the table is answered as text/csv.`,
  tags: ["insights"],
  querystring,
  response: { 200: response, "4xx": ErrorResponse, "5xx": ErrorResponse },
  security: [{ bearer: [] }],
});
