import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { issueApiKey } from "@warden/server/dist/admin/apiKeys.js";
import { buildApp } from "@warden/server/dist/app.js";
import { loadConfig } from "@warden/server/dist/config.js";
import { buildDeps, closeDeps } from "@warden/server/dist/deps.js";
import type { EventRecord } from "@warden/server/dist/domain.js";
import type { Store } from "@warden/server/dist/store/interfaces.js";
import { openSqliteStore } from "@warden/server/dist/store/sqlite/sqliteStore.js";
import SQLite from "better-sqlite3";
import { reasonCodesOf, seedConsoleData } from "./consoleSeed.js";

/**
 * What reason codes cost, on SQLite (docs/benchmarks.md, "Reason codes read when asked"):
 *   1. `record`: CPU per event recorded (verify's store call, conditional on the API key; one at a
 *      time, and 16 in flight as under load: BENCH_REASON_IN_FLIGHT) into a store as migrated, and
 *      into one that also has the side table and trigger that 0012_event_search first made
 *      (recreated here as it was), in alternating rounds, side by side;
 *   2. `reads`: on BENCH_REASON_READ_EVENTS (300,000) events over 30 days, the time of
 *      GET /v1/stats/reasons and of GET /v1/events?reasonCode=… for codes from common to absent,
 *      median and worst of BENCH_REASON_READS (7), each on a period the server has not read before.
 * BENCH_REASON_EVENTS (20,000) events per round, BENCH_REASON_ROUNDS (6) rounds of each store;
 * BENCH_REASON_PARTS (record,reads) picks the parts.
 */
const ROUND_EVENTS = Number(process.env.BENCH_REASON_EVENTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_REASON_ROUNDS ?? 6);
const READ_EVENTS = Number(process.env.BENCH_REASON_READ_EVENTS ?? 300_000);
const READS = Number(process.env.BENCH_REASON_READS ?? 7);
const PARTS = new Set((process.env.BENCH_REASON_PARTS ?? "record,reads").split(","));
const IN_FLIGHT = (process.env.BENCH_REASON_IN_FLIGHT ?? "1,16").split(",").map(Number);
const DAY = 86_400_000;

/** The side table and row trigger 0012_event_search made before reason codes were read at read time. */
const TRIGGER_DDL = `
  create table event_reasons (tenant_id text not null, code text not null, created_at bigint not null,
    event_id text not null, action text not null, decision text not null,
    constraint event_reasons_pk primary key (tenant_id, code, created_at, event_id)) without rowid;
  create index event_reasons_time on event_reasons (tenant_id, created_at, action, code, decision);
  create trigger events_reason_rows after insert on events when new.reason_codes is not null
  begin
    insert or ignore into event_reasons (tenant_id, code, created_at, event_id, action, decision)
    select distinct new.tenant_id, value, new.created_at, new.id, new.action, new.decision
    from json_each(new.reason_codes);
  end;`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-reasons-bench-"));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
};

/** An event as verify records it: protected signals, the principal, three reason codes. */
function verifyEvent(i: number, now: number): EventRecord {
  const network = `198.51.${i % 256}.0/24`;
  const emailHash = (i % 5000).toString(16).padStart(64, "0");
  return {
    id: `evt_${now.toString(36)}${i.toString(36).padStart(8, "0")}`,
    tenantId: "bench",
    keyId: "key_bench",
    createdAt: now,
    action: "signup",
    surface: "app.example.com/signup",
    session: `s${i.toString(36)}`,
    decision: "allow",
    wouldBeDecision: "allow",
    actorType: "human",
    confidence: 0.8,
    reasons: [
      "The browser headers match the browser the user agent claims.",
      "The email's local part looks random.",
      "Estimated abuse risk 3% (range 1%–9%); allow had the lowest expected cost with weights falseAllow 1, falseChallenge 1, falseDeny 3.",
    ],
    degraded: false,
    enforcementMode: "enforce",
    costs: { falseAllow: 1, falseChallenge: 1, falseDeny: 3 },
    signals: {
      emailSha256: emailHash,
      ipNetwork: network,
      browser: "Chrome",
      findings: [
        { id: "browser_consistent", logOdds: -1.2 },
        { id: "email_random", logOdds: 0.9 },
      ],
      risk: { estimate: 0.03, low: 0.01, high: 0.09 },
      principal: { resolved: false, operator: "", onBehalfOf: "", identityBasis: [] },
    },
    engineVersion: "warden-engine/3",
    policyVersion: "default",
    attempt: `att_${(i % 5000).toString(36)}`,
    decidedBy: "model",
    risk: { estimate: 0.03, low: 0.01, high: 0.09, raised: false },
    emailHash,
    network,
    reasonCodes: ["browser_consistent", "email_random", "risk_estimate"],
  };
}

async function openRecordStore(name: string, withTrigger: boolean): Promise<Store> {
  const file = path.join(dir, `${name}.db`);
  await (await openSqliteStore({ file, busyTimeoutMs: 5000 })).close();
  if (withTrigger) {
    const raw = new SQLite(file);
    raw.exec(TRIGGER_DDL);
    raw.close();
  }
  const store = await openSqliteStore({ file, busyTimeoutMs: 5000 });
  await store.tenants.create({ id: "bench", rawPii: false, logOnly: false, createdAt: 1 });
  await store.apiKeys.create(
    {
      tenantId: "bench",
      id: "key_bench",
      scopes: ["verify:write"],
      logOnly: false,
      createdAt: 1,
      revokedAt: null,
    },
    "hash-bench",
  );
  return store;
}

/** CPU (user + system, every thread of this process) per event, in µs, over one round. */
async function recordRound(store: Store, first: number, inFlight: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = first; i < first + ROUND_EVENTS; i += inFlight) {
    const now = Date.now();
    await Promise.all(
      Array.from({ length: inFlight }, (_, j) =>
        store.events.record(verifyEvent(i + j, now), undefined, undefined, { activeKey: true }),
      ),
    );
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / ROUND_EVENTS;
}

async function recordPart(): Promise<void> {
  const stores = {
    "as migrated (reason codes read at read time)": await openRecordStore("read-time", false),
    "with 0012's trigger and event_reasons": await openRecordStore("trigger", true),
  };
  const names = Object.keys(stores) as (keyof typeof stores)[];
  // Each round's events have ids of their own in both stores.
  let used = 0;
  const nextIds = () => {
    used += ROUND_EVENTS;
    return used;
  };
  for (const inFlight of IN_FLIGHT) {
    const perEvent = new Map<string, number[]>(names.map((n) => [n, []]));
    // A warm-up round each, not counted.
    for (const n of names) await recordRound(stores[n], nextIds(), inFlight);
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternating which goes first, so neither always follows the other's checkpoint.
      for (const n of round % 2 ? names : [...names].reverse()) {
        perEvent.get(n)?.push(await recordRound(stores[n], nextIds(), inFlight));
      }
    }
    process.stdout.write(
      `\nCPU per recorded event, µs, ${inFlight} in flight (${ROUNDS} rounds of ${ROUND_EVENTS} events each, alternating)\n`,
    );
    for (const n of names) {
      const xs = perEvent.get(n) ?? [];
      process.stdout.write(
        `  ${n}: median ${median(xs).toFixed(0)}, rounds ${xs.map((x) => x.toFixed(0)).join(" ")}\n`,
      );
    }
    const [a, b] = names.map((n) => median(perEvent.get(n) ?? []));
    if (a !== undefined && b !== undefined) {
      process.stdout.write(
        `  the trigger's share: ${(b - a).toFixed(0)} µs (${(((b - a) / b) * 100).toFixed(0)}% of the record)\n`,
      );
    }
  }
  for (const s of Object.values(stores)) await s.close();
}

async function readsPart(): Promise<void> {
  const file = path.join(dir, "reads.db");
  await (await openSqliteStore({ file, busyTimeoutMs: 5000 })).close();
  const now = Date.now();
  const seeded = performance.now();
  seedConsoleData(file, now, READ_EVENTS, Math.max(1, Math.floor(READ_EVENTS / 100)));
  process.stdout.write(
    `\nseeded ${READ_EVENTS} events in ${((performance.now() - seeded) / 1000).toFixed(1)} s\n`,
  );
  const config = loadConfig({
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${file}`,
    WARDEN_READ_ROWS_PER_MINUTE: "100000000",
    WARDEN_LOG_LEVEL: "warn",
  });
  const deps = await buildDeps(config);
  await deps.store.tenants.create({ id: "bench", rawPii: false, logOnly: false, createdAt: now });
  const { apiKey } = await issueApiKey(deps.store, {
    tenantId: "bench",
    scopes: ["ledger:read"],
    logOnly: false,
    now,
  });
  const app = await buildApp(deps);
  const base = await app.listen({ host: "127.0.0.1", port: 0 });
  const share = (code: string) =>
    Array.from({ length: READ_EVENTS }, (_, i) => reasonCodesOf(i, i % 997 === 0)).filter((c) =>
      c.includes(code),
    ).length;
  let period = 0;
  /** Each call on a period of its own (`until` one second later), so the route's cache never answers. */
  const timed = async (pathname: string, query: Record<string, string>, fresh = true) => {
    if (fresh) period++;
    const url = new URL(pathname, base);
    const until = now + 60_000 + period * 1000;
    url.searchParams.set("since", new Date(now - 31 * DAY).toISOString());
    url.searchParams.set("until", new Date(until).toISOString());
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = (await res.json()) as { items?: unknown[]; rows?: unknown[] };
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    return { ms, count: (body.items ?? body.rows ?? []).length };
  };
  const cases: [string, string, Record<string, string>][] = [
    ["GET /v1/stats/reasons (every event of the period)", "/v1/stats/reasons", {}],
    ["GET /v1/stats/reasons&action=signup", "/v1/stats/reasons", { action: "signup" }],
    ...["risk_estimate", "ua_automation", "hosting_network", "tls_library"].map(
      (code): [string, string, Record<string, string>] => [
        `GET /v1/events?reasonCode=${code} (${((share(code) / READ_EVENTS) * 100).toFixed(1)}% of events)`,
        "/v1/events",
        { reasonCode: code },
      ],
    ),
    [
      "GET /v1/events?reasonCode=ua_automation&emailHash=… (one address, 60 events)",
      "/v1/events",
      { reasonCode: "ua_automation", emailHash: (9).toString(16).padStart(64, "0") },
    ],
  ];
  process.stdout.write(`\nreads over ${READ_EVENTS} events, 31-day period, ms (${READS} each, uncached)\n`);
  for (const [label, pathname, query] of cases) {
    await timed(pathname, query);
    const runs = [];
    for (let i = 0; i < READS; i++) runs.push(await timed(pathname, query));
    const ms = runs.map((r) => r.ms);
    process.stdout.write(
      `  ${label}: median ${median(ms).toFixed(1)}, worst ${Math.max(...ms).toFixed(1)} (${runs[0]?.count} rows)\n`,
    );
  }
  const cached = [];
  await timed("/v1/stats/reasons", {});
  for (let i = 0; i < READS; i++) cached.push((await timed("/v1/stats/reasons", {}, false)).ms);
  process.stdout.write(
    `  GET /v1/stats/reasons, the same period again (cached): median ${median(cached).toFixed(1)}\n`,
  );
  await app.close();
  await closeDeps(deps);
}

if (PARTS.has("record")) await recordPart();
if (PARTS.has("reads")) await readsPart();
fs.rmSync(dir, { recursive: true, force: true });
