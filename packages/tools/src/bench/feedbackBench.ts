import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { ledgerSummary } from "@warden/server/dist/operations/feedback/ledger.js";
import { openSqliteStore } from "@warden/server/dist/store/sqlite/sqliteStore.js";
import autocannon from "autocannon";
import SQLite from "better-sqlite3";
import { startBenchServer } from "./startBenchServer.js";
import { steadyLoad } from "./steadyLoad.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const OBSERVATIONS = Number(process.env.BENCH_OBSERVATIONS ?? 1_000_000);
const _here = path.dirname(fileURLToPath(import.meta.url));
const OUTCOMES = [
  "credit_burn",
  "converted",
  "chargeback",
  "abuse_confirmed",
  "false_positive",
  "multi_account_cluster",
];

async function ingest(): Promise<void> {
  const server = await startBenchServer("verify");
  try {
    const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" };
    const events: string[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${server.url}/v1/verify`, {
        method: "POST",
        headers,
        body: JSON.stringify({ action: "signup", subject: {} }),
      });
      events.push(((await res.json()) as { eventId: string }).eventId);
    }
    const body = () =>
      JSON.stringify({
        eventId: events[Math.floor(Math.random() * events.length)],
        outcome: OUTCOMES[Math.floor(Math.random() * OUTCOMES.length)],
        value: Math.round(Math.random() * 10000) / 100,
        source: "billing",
        observedAt: new Date(Date.now() - Math.floor(Math.random() * 1e9)).toISOString(),
      });
    const run = () =>
      autocannon({
        url: `${server.url}/v1/feedback`,
        connections: CONNECTIONS,
        duration: SECONDS,
        method: "POST",
        headers,
        requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
      });
    await run();
    const peak = await run();
    // At a steady half of the peak, open loop (see steadyLoad.ts).
    const half = await steadyLoad(
      [{ origin: server.url, path: "/v1/feedback", headers, body }],
      SECONDS,
      Math.max(1, Math.floor(peak.requests.average / 2)),
    );
    process.stdout.write(
      [
        "",
        "| feedback ingest | req/s | p50 ms | p99 ms | non-2xx |",
        "|---|---:|---:|---:|---:|",
        `| peak (${CONNECTIONS} connections) | ${Math.round(peak.requests.average)} | ${peak.latency.p50} | ${peak.latency.p99} | ${peak.non2xx} |`,
        `| half of peak (steady) | ${Math.round(half.rps)} | ${half.p50} | ${half.p99} | ${half.non2xx} |`,
        "",
        `load generator late by (p99) in the steady run: ${half.lateP99} ms`,
        "",
      ].join("\n"),
    );
  } finally {
    server.child.kill("SIGTERM");
  }
}

async function summary(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-ledger-bench-"));
  const file = path.join(dir, "ledger.db");
  try {
    // Create the schema through the store, then load rows in bulk (loading is not what is measured).
    await (await openSqliteStore({ file, busyTimeoutMs: 5000 })).close();
    const raw = new SQLite(file);
    raw.pragma("journal_mode = WAL");
    const events = 10_000;
    const actions = ["signup", "trial_activation", "api_key", "demo_request"];
    const insertEvent = raw.prepare(
      `insert into events (id, tenant_id, key_id, created_at, action, surface, session, decision, would_be_decision,
         actor_type, confidence, reasons, degraded, enforcement_mode, costs, signals, engine_version, policy_version)
       values (?, 'bench', 'key', ?, ?, null, null, 'allow', 'allow', 'unknown', 0.5, '[]', 0, 'enforce', '{}', '{}', 'e', 'p')`,
    );
    const insertObs = raw.prepare(
      `insert into feedback (feedback_id, tenant_id, event_id, identity, outcome, value, unit, source, observed_at,
         received_at, status, conflicts_with, seq) values (?, 'bench', ?, ?, ?, ?, ?, 'billing', ?, ?, ?, null, ?)`,
    );
    const started = performance.now();
    raw.transaction(() => {
      for (let e = 0; e < events; e++) insertEvent.run(`evt_${e}`, e, actions[e % actions.length]);
    })();
    const perEvent = Math.ceil(OBSERVATIONS / events);
    const chunk = raw.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const outcome = OUTCOMES[i % OUTCOMES.length] as string;
        const status = i % 50 === 0 ? "quarantined" : "effective";
        insertObs.run(
          `fb_${i}`,
          `evt_${i % events}`,
          randomBytes(8).toString("hex"),
          outcome,
          i % 7 === 0 ? null : (i % 997) + 0.5,
          i % 7 === 0 ? null : i % 5 === 0 ? "credits" : "usd",
          1_700_000_000_000 + i * 1000,
          1_700_000_000_000 + i * 1000,
          status,
          Math.floor(i / events) + 1,
        );
      }
    });
    for (let i = 0; i < OBSERVATIONS; i += 50_000) chunk(i, Math.min(OBSERVATIONS, i + 50_000));
    raw.close();
    process.stdout.write(
      `loaded ${OBSERVATIONS} observations on ${events} events (${perEvent} each) in ${Math.round(performance.now() - started)} ms\n`,
    );

    const store = await openSqliteStore({ file, busyTimeoutMs: 5000 });
    const time = async (label: string, filter: Parameters<typeof ledgerSummary>[2]) => {
      // How long the summary holds the event loop (every request would wait that long), besides its time.
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const t0 = performance.now();
      const s = await ledgerSummary(store, "bench", filter);
      const ms = performance.now() - t0;
      await new Promise((resolve) => setTimeout(resolve, 5));
      delay.disable();
      const held = (delay.max / 1e6).toFixed(1);
      process.stdout.write(`| ${label} | ${Math.round(ms)} | ${held} | ${Math.round(s.ledgerUsdTotal)} |\n`);
    };
    process.stdout.write(
      "\n| tenant summary over the observations | ms | event loop held, max ms | ledger usd total |\n|---|---:|---:|---:|\n",
    );
    await time("all time (cold)", {});
    await time("all time (warm)", {});
    await time("one action", { action: "api_key" });
    await time("last 10% of the time range", { since: 1_700_000_000_000 + OBSERVATIONS * 900 });
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await ingest();
await summary();
