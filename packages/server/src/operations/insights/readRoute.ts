import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { requireCaller } from "../../http/auth.js";
import { queryDate } from "../../http/queryDate.js";
import type { RouteSettings } from "../../http/types.js";
import type { EventScope, ReadMeter, Store } from "../../store/interfaces.js";
import type { TokenSettings } from "../../tokens/verdictToken.js";
import type { DecisionModel } from "../verify/decisionModel.js";
import { csvLines } from "./csv.js";
import type { ReadBudget, ReadTicket } from "./readBudget.js";

export interface InsightDeps {
  store: Store;
  clock: () => number;
  tokens: TokenSettings;
  model: DecisionModel;
  /** Each API key's console reads per minute, in rows (readBudget.ts). */
  readRowsPerMinute: number;
  /** And in milliseconds of the store's time (readBudget.ts). */
  readStoreMsPerMinute: number;
}

/** What the routes share: the deps and the read budget made from them. */
export interface InsightRouteDeps extends InsightDeps {
  budget: ReadBudget;
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
  "emailHash",
  "network",
  "reasonCode",
  "degraded",
  "limit",
  "cursor",
  "bins",
  "falseAllow",
  "falseChallenge",
  "falseDeny",
  "list",
  "value",
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

/** The bucket a time series is counted in: the one asked for, else hours up to three days, days beyond. */
export const bucketFor = (asked: "hour" | "day" | undefined, scope: EventScope): "hour" | "day" =>
  asked ?? (scope.until - scope.since <= 3 * DAY_MS ? "hour" : "day");
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

/** Rows formatted in one `turn`: well under a millisecond of work with their share of reads and writes. */
export const CSV_CHUNK_ROWS = 250;
/**
 * The console's turns come at most this often, process-wide: a turn's chunk (its rows read,
 * converted, formatted and written) costs about 0.6 ms of the event loop, so the console's exports
 * take at most about a tenth of it, however many run at once; a 50,000-row export alone streams in
 * about 1.6 s.
 */
export const TURN_INTERVAL_MS = 8;

const turns: (() => void)[] = [];
let turning = false;
let lastTurn = Number.NEGATIVE_INFINITY;
function nextTurn(): void {
  lastTurn = performance.now();
  const go = turns.shift();
  if (turns.length > 0) setTimeout(nextTurn, TURN_INTERVAL_MS);
  else turning = false;
  go?.();
}

/**
 * Waits for the console's next turn on the event loop. Turns are shared by every export and
 * conversion of the process, first come first served, one every TURN_INTERVAL_MS: each lets one
 * chunk of work run, and the loop answers verify's requests and store results in between. The
 * exports of twelve readers at once then cost verify what one export does (they share the turns and
 * go slower instead), where a turn each (a setImmediate per export) ran twelve chunks back to back
 * in every loop iteration and, in total, took what verify needed of the loop.
 */
export function turn(): Promise<void> {
  return new Promise((resolve) => {
    turns.push(resolve);
    if (!turning) {
      turning = true;
      setTimeout(nextTurn, Math.max(0, lastTurn + TURN_INTERVAL_MS - performance.now()));
    }
  });
}

/**
 * `items.map(fn)` in chunks of `chunk`, with a turn of the event loop between them: for tables of
 * thousands of rows (decisions by the hour over a month: about 10,000), whose conversion alone held
 * the loop for 7–21 ms.
 */
export async function mapInTurns<T, U>(items: readonly T[], fn: (item: T) => U, chunk = 500): Promise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i += chunk) {
    if (i > 0) await turn();
    for (const item of items.slice(i, i + chunk)) out.push(fn(item));
  }
  return out;
}

/** A CSV column: a field of the row, or a column's name and how a row gives its value. */
export type CsvColumn<Row> = (keyof Row & string) | readonly [name: string, value: (row: Row) => unknown];

/** A table's CSV download: its file name (without .csv) and its columns in order. */
export interface CsvTable<Row> {
  name: string;
  columns: readonly CsvColumn<Row>[];
}

/** A console read admitted under its key's read budget (admitRead): whose it is and how it answers. */
export interface AdmittedRead {
  /** The caller's tenant: the only one the read sees. */
  readonly tenantId: string;
  /** Charges the key the time the read's statements take in the store. */
  readonly meter: ReadMeter;
  /** Whether the query asked for text/csv (format=csv). */
  readonly csv: boolean;
  /** A JSON answer of `rows` rows: they are counted, and `body` is the answer. */
  json<Body>(body: Body, rows: number): Body;
  /** Rows as text/csv (sendCsv): counted as they are sent. */
  sendCsv(
    name: string,
    columns: readonly string[],
    rows: unknown[][] | AsyncIterable<unknown[][]>,
  ): Promise<string | Readable>;
  /**
   * `rows` as the answer: `table`'s columns as text/csv when the query asked for format=csv, else
   * `body()`; the rows are counted either way.
   */
  table<Row, Body>(
    rows: readonly Row[],
    table: CsvTable<Row>,
    body: () => Body,
  ): Promise<Body | string | Readable>;
}

/**
 * Admits the caller's read under its key's read budget (429 rate_limited when spent), reserving
 * `reserve` rows; what it reserved is settled when the answer is sent or the request ends otherwise.
 */
export function admitRead(
  request: FastifyRequest,
  reply: FastifyReply,
  budget: ReadBudget,
  reserve: number,
): AdmittedRead {
  const ticket = budget.admit(requireCaller(request).key.id, reserve);
  // Once the answer is sent, or the connection is gone (a download cut short counts what it sent).
  reply.raw.once("close", () => ticket.settle());
  const csv = (request.query as { format?: unknown } | undefined)?.format === "csv";
  const sendRows: AdmittedRead["sendCsv"] = (name, columns, rows) =>
    sendCsv(reply, name, columns, rows, ticket);
  return {
    tenantId: requireCaller(request).tenant.id,
    meter: ticket.meter,
    csv,
    json: (body, rows) => {
      ticket.add(rows);
      return body;
    },
    sendCsv: sendRows,
    table: async (rows, { name, columns }, body) => {
      if (!csv) {
        ticket.add(rows.length);
        return body();
      }
      const cells = columns.map((c) =>
        typeof c === "string" ? (row: (typeof rows)[number]) => row[c] : c[1],
      );
      return sendRows(
        name,
        columns.map((c) => (typeof c === "string" ? c : c[0])),
        await mapInTurns(rows, (row) => cells.map((cell) => cell(row))),
      );
    },
  };
}

/**
 * A table as text/csv. Its rows are formatted in chunks of CSV_CHUNK_ROWS, each in a `turn`, and
 * streamed: a 50,000-row export never holds the loop for more than a few milliseconds at a time, and
 * when `rows` is a list read batch by batch (readPages) the next batch is read only once the socket
 * has taken the text before it. The first batch is read before the answer starts, so a store fault
 * there is still the route's 503; a table of one chunk is answered whole. The text is byte for byte
 * toCsv's (csv.ts). Counts the rows on `ticket` and settles it at the end.
 */
async function sendCsv(
  reply: FastifyReply,
  name: string,
  columns: readonly string[],
  rows: unknown[][] | AsyncIterable<unknown[][]>,
  ticket: ReadTicket,
): Promise<string | Readable> {
  const batches = Array.isArray(rows) ? [rows][Symbol.iterator]() : rows[Symbol.asyncIterator]();
  const first = await batches.next();
  reply.type("text/csv; charset=utf-8");
  reply.header("content-disposition", `attachment; filename="${name}.csv"`);
  if (Array.isArray(rows) && rows.length <= CSV_CHUNK_ROWS) {
    ticket.add(rows.length);
    ticket.settle();
    return csvLines([columns, ...rows]);
  }
  return Readable.from(csvChunks(columns, first, batches, ticket), {
    objectMode: false,
    highWaterMark: 64 * 1024,
  });
}

async function* csvChunks(
  columns: readonly string[],
  first: IteratorResult<unknown[][]>,
  rest: Iterator<unknown[][]> | AsyncIterator<unknown[][]>,
  ticket: ReadTicket,
): AsyncGenerator<string> {
  try {
    yield csvLines([columns]);
    for (let next = first; !next.done; next = await rest.next()) {
      const batch = next.value;
      ticket.add(batch.length);
      for (let i = 0; i < batch.length; i += CSV_CHUNK_ROWS) {
        await turn();
        yield csvLines(batch.slice(i, i + CSV_CHUNK_ROWS));
      }
    }
  } finally {
    ticket.settle();
    // A download cut short: the list's reads end here too.
    await rest.return?.();
  }
}

export const schema = (summary: string, querystring: unknown, response: unknown) => ({
  summary: `${summary}. With format=csv the table is answered as text/csv.`,
  tags: ["insights"],
  querystring,
  response: { 200: response, "4xx": ErrorResponse, "5xx": ErrorResponse },
  security: [{ bearer: [] }],
});
