import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { redisAnswers } from "@warden/server/dist/store/redis/redisCounters.js";
import {
  createKey,
  freePort,
  startWarden,
  type WardenProcess,
  wardenCli,
} from "@warden/server/dist-testing/testing/wardenProcess.js";
import pg from "pg";
import { CONNECTIONS, load, type Run, steadyVerify } from "./verifyLoad.js";

/**
 * `warden serve --workers 1` against `--workers 2`, side by side on one machine, on PostgreSQL with
 * Redis: verify at full speed (closed loop, CONNECTIONS connections to the one port), then at one
 * steady rate (open loop), the two worker counts alternated ROUNDS times so a drift of the machine
 * hits both. Degraded answers are read from the workers' summed /metrics. Two separate processes (each
 * on its own port, the connections split) run beside them, which is what --workers 2 is without the
 * primary; on SQLite, where more than one worker is refused, that comparison alone shows why. The load
 * generator runs on the same cores.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** The one steady rate both worker counts are also measured at (open loop), in verifies a second. */
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 300);
const PG_URL = process.env.WARDEN_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.WARDEN_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
/** Only the store whose name starts with this (`SQLite`, `PostgreSQL`), when set. */
const ONLY = process.env.BENCH_STORE;

interface Measured {
  store: string;
  setup: string;
  round: number;
  peak: Run;
  degradedShare: number;
  steady: Run;
}

/** verify answers counted by every worker, and the degraded ones among them. */
async function decisions(admins: string[]): Promise<{ all: number; degraded: number }> {
  let all = 0;
  let degraded = 0;
  for (const admin of admins) {
    const text = await (await fetch(`${admin}/metrics`)).text();
    for (const line of text.split("\n")) {
      if (!line.startsWith("warden_verify_decisions_total{")) continue;
      const n = Number(line.split(" ").at(-1));
      all += n;
      if (line.includes('degraded="true"')) degraded += n;
    }
  }
  return { all, degraded };
}

/** Several targets at full speed at once: connections split evenly, rates summed, the worst p99 kept. */
async function loadAll(targets: { url: string; apiKey: string }[], seconds: number): Promise<Run> {
  const share = Math.max(1, Math.floor(CONNECTIONS / targets.length));
  const runs = await Promise.all(targets.map((t) => load(t, seconds, share)));
  return {
    rps: runs.reduce((sum, r) => sum + r.rps, 0),
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
  };
}

/** Starts `processes` × `warden serve [--workers workers]` on `env`, each with an admin port. */
async function start(
  env: Record<string, string>,
  processes: number,
  workers: number,
): Promise<{ started: WardenProcess[]; admins: string[] }> {
  const started: WardenProcess[] = [];
  const admins: string[] = [];
  for (let i = 0; i < processes; i++) {
    const adminPort = await freePort();
    started.push(
      await startWarden(
        { ...env, WARDEN_ADMIN_PORT: String(adminPort) },
        60_000,
        workers > 1 ? ["--workers", String(workers)] : [],
      ),
    );
    admins.push(`http://127.0.0.1:${adminPort}`);
  }
  // Every worker listening before the load starts.
  for (const admin of admins) {
    for (;;) {
      const text = await (await fetch(`${admin}/metrics`)).text();
      const listening = /^warden_workers_listening (\d+)/m.exec(text)?.[1];
      if (workers === 1 || Number(listening) === workers) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { started, admins };
}

async function measure(
  store: string,
  env: Record<string, string>,
  setup: { name: string; processes: number; workers: number },
  round: number,
): Promise<Measured> {
  const { started, admins } = await start(env, setup.processes, setup.workers);
  let codes: (number | null)[] = [];
  try {
    const apiKey = await createKey(env, "bench", "verify:write");
    const targets = started.map((w) => ({ url: w.url, apiKey }));
    await loadAll(targets, 3);
    const before = await decisions(admins);
    process.stdout.write(`${store}, ${setup.name}, round ${round}: ${SECONDS}s at full speed…\n`);
    const peak = await loadAll(targets, SECONDS);
    const after = await decisions(admins);
    const answered = after.all - before.all;
    process.stdout.write(`${store}, ${setup.name}, round ${round}: ${STEADY_RATE}/s steady…\n`);
    const steady = await steadyVerify(targets, SECONDS, STEADY_RATE);
    return {
      store,
      setup: setup.name,
      round,
      peak,
      degradedShare: answered === 0 ? 0 : (after.degraded - before.degraded) / answered,
      steady,
    };
  } finally {
    codes = await Promise.all(started.map((w) => w.stop()));
    if (codes.some((c) => c !== 0)) process.stdout.write(`warden serve exited ${codes.join(", ")}\n`);
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-workers-bench-"));
  const ONE = { name: "1 process", processes: 1, workers: 1 };
  const stores: {
    name: string;
    env: Record<string, string>;
    setups: { name: string; processes: number; workers: number }[];
    drop?: () => Promise<void>;
  }[] = [
    {
      name: "SQLite",
      setups: [ONE, { name: "2 processes, one file", processes: 2, workers: 1 }],
      env: {
        WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "bench.db")}`,
        WARDEN_RATE_LIMIT_MAX: "100000000",
        WARDEN_LOG_LEVEL: "warn",
        WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, "spool"),
      },
    },
  ];
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
    const database = `warden_bench_${randomBytes(5).toString("hex")}`;
    await admin.query(`create database ${database}`);
    const url = new URL(PG_URL);
    url.pathname = `/${database}`;
    const withRedis = await redisAnswers(REDIS_URL);
    stores.push({
      name: withRedis ? "PostgreSQL + Redis" : "PostgreSQL",
      setups: [
        ONE,
        { name: "--workers 2", processes: 1, workers: 2 },
        { name: "2 processes", processes: 2, workers: 1 },
      ],
      env: {
        WARDEN_DATABASE_URL: url.toString(),
        WARDEN_RATE_LIMIT_MAX: "100000000",
        WARDEN_LOG_LEVEL: "warn",
        WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, "spool"),
        ...(withRedis ? { WARDEN_REDIS_URL: REDIS_URL, WARDEN_REDIS_KEY_PREFIX: `${database}:` } : {}),
      },
      drop: async () => {
        await admin.query(`drop database if exists ${database} with (force)`);
      },
    });
  } catch {
    process.stdout.write(`\nPostgreSQL is not reachable at ${PG_URL}: its half of the bench is SKIPPED\n`);
  }
  const results: Measured[] = [];
  try {
    process.stdout.write(
      `\nworkers bench: ${os.availableParallelism()} cores, load average ${os.loadavg()[0]?.toFixed(1)}, ${CONNECTIONS} connections, load generator on the same cores\n`,
    );
    for (const store of stores.filter((s) => ONLY === undefined || s.name.startsWith(ONLY))) {
      await wardenCli(store.env, "tenant", "create", "bench");
      for (let round = 1; round <= ROUNDS; round++) {
        for (const setup of store.setups) results.push(await measure(store.name, store.env, setup, round));
      }
    }
    const lines = [
      "",
      `| store | run | round | peak req/s | p50 ms | p99 ms | degraded | at ${STEADY_RATE}/s: p50 ms | p99 ms | degraded | non-2xx | errors |`,
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...results.map(
        (r) =>
          `| ${r.store} | ${r.setup} | ${r.round} | ${r.peak.rps.toFixed(0)} | ${r.peak.p50} | ${r.peak.p99} | ${(100 * r.degradedShare).toFixed(1)}% | ${r.steady.p50} | ${r.steady.p99} | ${((100 * (r.steady.degraded ?? 0)) / (STEADY_RATE * SECONDS)).toFixed(1)}% | ${r.peak.non2xx + r.steady.non2xx} | ${r.peak.errors + r.steady.errors} |`,
      ),
      "",
    ];
    lines.push(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(", ")}`,
      "",
    );
    process.stdout.write(lines.join("\n"));
    fs.mkdirSync(".bench", { recursive: true });
    const file = path.join(".bench", `workers-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    fs.writeFileSync(file, JSON.stringify(results, null, 2));
    process.stdout.write(`raw figures: ${file}\n`);
  } finally {
    for (const store of stores) await store.drop?.();
    await admin.end().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
