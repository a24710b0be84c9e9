import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { expectError, makeTestApp, type TestApp, testEvent } from "../../testing/harness.js";
import { toCsv } from "./csv.js";
import { READ_ROWS } from "./cursor.js";

/**
 * Lists longer than one store read (READ_ROWS): pages and exports read in several keyset reads, ties
 * on the time included, give every event once, in order, and the same rows in JSON and CSV.
 */
const EVENTS = 2 * READ_ROWS + 100;
const NOW = Date.parse("2026-11-25T12:00:00Z");
let t: TestApp;
let reader: string;
/** listEvents fails from this call on (counted from 0), when set. */
let failFrom: number | undefined;
let listCalls = 0;

beforeAll(async () => {
  t = await makeTestApp({
    clock: () => NOW,
    wrapStore: (store) => ({
      ...store,
      insights: {
        ...store.insights,
        listEvents: (...args) => {
          if (failFrom !== undefined && listCalls++ >= failFrom)
            return Promise.reject(new StoreUnavailableError("injected: the store went away"));
          return store.insights.listEvents(...args);
        },
      },
    }),
  });
  await t.tenant("acme");
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
  // A hundred at a time: concurrent records share the store's group commits.
  for (let from = 0; from < EVENTS; from += 100) {
    const batch = Array.from({ length: Math.min(100, EVENTS - from) }, (_, k) => from + k);
    await Promise.all(
      batch.map((i) =>
        t.store.events.record(
          testEvent(`evt_p${String(i).padStart(4, "0")}`, {
            tenantId: "acme",
            // Two events a millisecond: read boundaries fall between events of one time.
            createdAt: NOW - 60_000 + Math.floor(i / 2),
            action: i % 7 === 0 ? "=cmd" : "signup",
            session: i % 5 === 0 ? 'a "quoted"; session' : `s${i}`,
          }),
          undefined,
        ),
      ),
    );
  }
});
afterAll(() => t.close());

const get = (url: string) =>
  t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${reader}` } });

type Item = Record<string, unknown> & { eventId: string };

describe("lists over several store reads", () => {
  it("pages through every event once, newest first, in JSON and in CSV", async () => {
    const items: Item[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/v1/events?limit=500${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.statusCode).toBe(200);
      const page = res.json() as { items: Item[]; nextCursor: string | null };
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(items.map((e) => e.eventId)).toEqual(
      Array.from({ length: EVENTS }, (_, i) => `evt_p${String(EVENTS - 1 - i).padStart(4, "0")}`),
    );

    const columns = Object.keys(items[0] as Item);
    let csv = "";
    let next: string | undefined;
    let exports = 0;
    do {
      const res = await get(`/v1/events?format=csv&limit=${READ_ROWS + 7}${next ? `&cursor=${next}` : ""}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("text/csv; charset=utf-8");
      // Every export after the first repeats the header: keep the rows only.
      csv += exports++ === 0 ? res.body : res.body.slice(res.body.indexOf("\r\n") + 2);
      next = res.headers["x-next-cursor"] as string | undefined;
    } while (next);
    expect(exports).toBe(Math.ceil(EVENTS / (READ_ROWS + 7)));
    expect(csv).toBe(
      toCsv(
        columns,
        items.map((e) => columns.map((c) => e[c])),
      ),
    );
  });
});

describe("an export the store fails", () => {
  it("is a 503 in the Error schema when the store fails before the first row", async () => {
    failFrom = 0;
    listCalls = 0;
    try {
      expectError(await get("/v1/events?format=csv&limit=50000"), 503, "store_unavailable");
    } finally {
      failFrom = undefined;
    }
  });

  it("is cut, never a short file that looks whole, when the store fails after the first rows", async () => {
    const url = await t.app.listen({ host: "127.0.0.1", port: 0 });
    failFrom = 1;
    listCalls = 0;
    try {
      const res = await fetch(`${url}/v1/events?format=csv&limit=50000`, {
        headers: { authorization: `Bearer ${reader}` },
      });
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    } finally {
      failFrom = undefined;
    }
  });
});
