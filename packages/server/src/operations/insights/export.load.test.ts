import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";
import { toCsv } from "./csv.js";
import { READ_ROWS } from "./cursor.js";
import { EVENT_CSV_COLUMNS } from "./eventsRoute.js";

/**
 * A 50,000-row CSV export (the largest one request may ask for) on SQLite, against the event loop
 * that answers verify. Before exports were streamed, the rows came back from the read worker in one
 * message and were converted and formatted in one go: 470–625 ms of one block on the loop for this
 * export on the bench machine, every verify in flight waiting behind it.
 *
 * What is asserted is the shape that keeps the loop free, counted, not timed: the rows are read from
 * the store READ_ROWS at a time, the client has rows of the table before the last read (streamed as
 * read, not gathered and formatted at the end), and every verify sent while the export runs is
 * answered between two of its reads. How long the loop is held is a figure of the machine, measured
 * by consoleBench (its readers' 50,000-row exports and the server's longest event-loop block,
 * docs/benchmarks.md), not asserted here.
 */
const ROWS = 50_010;
const LIMIT = 50_000;
const NOW = Date.parse("2026-11-25T12:00:00Z");
const COLUMNS = EVENT_CSV_COLUMNS;
/** Values a spreadsheet would run or split on: the export must escape them exactly as toCsv does. */
const ACTIONS = ["signup", '=HYPERLINK("http://x")', "+cmd", "-2+3", "@SUM(A1)", 'say "hi"', "a;b", "x,y"];
const SESSIONS = ["s", "line\nbreak", "\ttab", "=1+1", null, "plain-session", "cr\rx"];
const DECISIONS = ["allow", "challenge", "deny"] as const;

let t: TestApp;
let reader: string;
let writer: string;
let url: string;
/** The seeded events as the export shows them, newest first (created_at, then id, descending). */
let expected: unknown[][] = [];
/** What happened, in order, while an export ran: each store read of its rows and its size, and more. */
let timeline: { what: "read" | "verify answered" | "rows received"; count?: number }[] | undefined;

/** The store, with each listEvents call (the export's reads of its rows) noted on the timeline. */
function noteReads(store: Store): Store {
  const insights = new Proxy(store.insights, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== "listEvents" || typeof value !== "function") return value;
      return (...args: Parameters<Store["insights"]["listEvents"]>) => {
        timeline?.push({ what: "read", count: args[2] });
        return value.apply(target, args);
      };
    },
  });
  return { ...store, insights };
}

beforeAll(async () => {
  t = await makeTestApp({ clock: () => NOW, wrapStore: noteReads });
  await t.tenant("acme");
  reader = (await t.key("acme", { scopes: ["ledger:read"] })).apiKey;
  writer = (await t.key("acme", { scopes: ["verify:write"] })).apiKey;
  const db = new SQLite(t.dbFile);
  const insert = db.prepare(
    `insert into events (id, tenant_id, key_id, created_at, action, surface, session, decision, would_be_decision,
       actor_type, confidence, reasons, degraded, enforcement_mode, costs, signals, engine_version, policy_version,
       attempt, decided_by, risk_estimate, risk_low, risk_high, risk_raised)
     values (?, 'acme', 'key_seed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'e', 'p', null, 'model', ?, ?, ?, 0)`,
  );
  const rows: { createdAt: number; id: string; row: unknown[] }[] = [];
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      // Three events a millisecond: ties on the time are ordered by id, also across read boundaries.
      const createdAt = NOW - 3_600_000 + Math.floor(i / 3);
      const id = `evt_${(i * 7919) % ROWS}`.padEnd(12, "x");
      const action = ACTIONS[i % ACTIONS.length] as string;
      const session = SESSIONS[i % SESSIONS.length] as string | null;
      const surface = i % 5 === 0 ? null : "app.example.com/signup";
      const decision = DECISIONS[i % 3] as string;
      const risk = i % 11 === 0 ? null : (i % 1000) / 1000;
      const degraded = i % 13 === 0;
      const confidence = (i % 100) / 100;
      insert.run(
        id,
        createdAt,
        action,
        surface,
        session,
        decision,
        decision,
        "unknown",
        confidence,
        JSON.stringify(["The browser headers match the browser the user agent claims.", "x".repeat(120)]),
        degraded ? 1 : 0,
        "enforce",
        '{"falseAllow":1,"falseChallenge":1,"falseDeny":3}',
        JSON.stringify({ ipNetwork: `198.51.${i % 256}.0/24`, browser: "Chrome", pad: "y".repeat(300) }),
        risk,
        risk === null ? null : Math.max(0, risk - 0.05),
        risk === null ? null : Math.min(1, risk + 0.05),
      );
      rows.push({
        createdAt,
        id,
        row: [
          id,
          new Date(createdAt).toISOString(),
          action,
          surface,
          session,
          decision,
          decision,
          "unknown",
          confidence,
          risk,
          degraded,
          "enforce",
        ],
      });
    }
  })();
  db.close();
  rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  expected = rows.map((r) => r.row);
  url = await t.app.listen({ host: "127.0.0.1", port: 0 });
}, 60_000);
afterAll(() => t.close());

/** The body read as it arrives, kept as bytes; the first bytes past the header row are noted on the timeline. */
async function download(path: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${reader}` } });
  const header = Buffer.byteLength(toCsv(COLUMNS, []));
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (received <= header && received + chunk.length > header) timeline?.push({ what: "rows received" });
    received += chunk.length;
    chunks.push(Buffer.from(chunk));
  }
  return { status: res.status, headers: res.headers, bytes: Buffer.concat(chunks) };
}

const period = `since=${new Date(NOW - 2 * 3_600_000).toISOString()}&until=${new Date(NOW).toISOString()}`;

describe("a 50,000-row CSV export", () => {
  it("streams read by read: rows reach the client before the last read, and verifies sent meanwhile are answered between reads", async () => {
    const seen: NonNullable<typeof timeline> = [];
    timeline = seen;
    const verifies: Promise<number>[] = [];
    const exported = download(`/v1/events?${period}&format=csv&limit=${LIMIT}`);
    // Verifies arriving while the export's rows are read, converted and sent (from its first read on:
    // before it the export reads where its last row sits, in the read worker).
    while (!seen.some((e) => e.what === "read")) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 40));
      verifies.push(
        fetch(`${url}/v1/verify`, {
          method: "POST",
          headers: bearer(writer),
          body: JSON.stringify({
            action: "signup",
            session: `v${i}`,
            subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "198.51.100.0/24" },
          }),
        }).then((res) => {
          seen.push({ what: "verify answered" });
          return res.status;
        }),
      );
    }
    const result = await exported;
    const answered = await Promise.all(verifies);
    timeline = undefined;
    expect(answered).toEqual(Array(10).fill(200));

    const reads = seen.filter((e) => e.what === "read");
    const firstRead = seen.findIndex((e) => e.what === "read");
    const lastRead = seen.findLastIndex((e) => e.what === "read");
    const order = JSON.stringify(seen.map((e) => e.what));
    // Read by read: no read of more than READ_ROWS (and the one that tells whether more follow).
    expect(reads.length).toBeGreaterThanOrEqual(LIMIT / READ_ROWS);
    expect(reads.filter((r) => (r.count as number) > READ_ROWS + 1)).toEqual([]);
    // Streamed as read: rows reached the client before the store's last read, so they were formatted
    // and sent batch by batch, not once every row was in.
    expect(
      seen.findIndex((e) => e.what === "rows received"),
      order,
    ).toBeLessThan(lastRead);
    // Verify's turns came between the export's reads: every verify sent during the export was
    // answered after its first read and before its last.
    const verifyAnswers = seen.flatMap((e, i) => (e.what === "verify answered" ? [i] : []));
    expect(
      verifyAnswers.filter((i) => i < firstRead || i > lastRead),
      order,
    ).toEqual([]);

    expect(result.status).toBe(200);
    expect(result.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(result.headers.get("content-disposition")).toBe('attachment; filename="events.csv"');
    const text = result.bytes.toString("utf8");
    // Byte for byte toCsv's text of the newest 50,000 rows, formula prefixes and quoting included.
    expect(text === toCsv(COLUMNS, expected.slice(0, LIMIT))).toBe(true);
    expect(text).toContain(`,"'=HYPERLINK(""http://x"")",`);
    expect(text).toContain(`,"line\nbreak",`);

    // The cursor after the export's last row was sent before the rows; the next export starts there.
    const cursor = result.headers.get("x-next-cursor");
    expect(cursor).toBeTruthy();
    const rest = await download(`/v1/events?${period}&format=csv&limit=${LIMIT}&cursor=${cursor}`);
    expect(rest.bytes.toString("utf8")).toBe(toCsv(COLUMNS, expected.slice(LIMIT)));
    expect(rest.headers.get("x-next-cursor")).toBeNull();
  }, 60_000);
});
