import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { redisAnswers } from "@warden/server/dist/store/redis/redisCounters.js";
import {
  startWarden,
  type WardenProcess,
  wardenCli,
} from "@warden/server/dist-testing/testing/wardenProcess.js";
import pg from "pg";
import { startBenchServer } from "./startBenchServer.js";
import { CONNECTIONS, load, type Run, steadyVerify } from "./verifyLoad.js";

/**
 * Verify on PostgreSQL (and Redis, when it answers): real `warden serve` processes, one and then two,
 * loaded side by side with the same minimal handler as the SQLite bench, on this one machine. Peak
 * throughput (closed loop), then p50/p99 at a steady half of each peak (open loop, see steadyLoad). Skips (and says so) when PostgreSQL is unreachable.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PG_URL = process.env.WARDEN_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.WARDEN_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Several processes at full speed at once: connections split evenly, rates summed, the worst p99 kept. */
async function loadAll(targets: { url: string; apiKey: string }[], seconds: number): Promise<Run> {
  const share = Math.max(1, Math.floor(CONNECTIONS / targets.length));
  const runs = await Promise.all(targets.map((t) => load(t, seconds, share)));
  return {
    rps: runs.reduce((s, r) => s + r.rps, 0),
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
  };
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    process.stdout.write(`\nPostgreSQL is not reachable at ${PG_URL}: the scale-out bench is SKIPPED\n`);
    return;
  }
  const database = `warden_bench_${randomBytes(5).toString("hex")}`;
  await admin.query(`create database ${database}`);
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  const withRedis = await redisAnswers(REDIS_URL);
  const env: Record<string, string> = {
    WARDEN_DATABASE_URL: url.toString(),
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_LOG_LEVEL: "warn",
    ...(withRedis ? { WARDEN_REDIS_URL: REDIS_URL, WARDEN_REDIS_KEY_PREFIX: `${database}:` } : {}),
  };
  const processes: WardenProcess[] = [];
  const minimal = await startBenchServer("minimal");
  try {
    processes.push(await startWarden(env));
    await wardenCli(env, "tenant", "create", "bench");
    const { apiKey } = JSON.parse(
      await wardenCli(env, "key", "create", "--tenant", "bench", "--scopes", "verify:write", "--json"),
    ) as { apiKey: string };
    const one = [{ url: (processes[0] as WardenProcess).url, apiKey }];
    process.stdout.write(
      `\nscale-out bench: PostgreSQL${withRedis ? " + Redis" : ""}, ${CONNECTIONS} connections\n`,
    );
    await loadAll(one, 3);
    await load(minimal, 3);
    const minimalPeak = await load(minimal, SECONDS);
    process.stdout.write(`one process, peak: ${SECONDS}s…\n`);
    const onePeak = await loadAll(one, SECONDS);
    const oneHalf = await steadyVerify(one, SECONDS, Math.floor(onePeak.rps / 2));

    processes.push(await startWarden(env));
    const two = processes.map((p) => ({ url: p.url, apiKey }));
    await loadAll(two, 3);
    process.stdout.write(`two processes, peak: ${SECONDS}s…\n`);
    const twoPeak = await loadAll(two, SECONDS);
    const twoHalf = await steadyVerify(two, SECONDS, Math.floor(twoPeak.rps / 2));

    const row = (name: string, r: Run) =>
      `| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`;
    process.stdout.write(
      [
        "",
        "| run | req/s | p50 ms | p99 ms | non-2xx | errors |",
        "|---|---:|---:|---:|---:|---:|",
        row("minimal handler (SQLite), peak", minimalPeak),
        row("verify, 1 process, peak", onePeak),
        row(`verify, 1 process, at ${Math.floor(onePeak.rps / 2)} req/s`, oneHalf),
        row("verify, 2 processes, peak", twoPeak),
        row(`verify, 2 processes, at ${Math.floor(twoPeak.rps / 2)} req/s`, twoHalf),
        "",
        `p99 at half of peak: ${oneHalf.p99} ms (1 process), ${twoHalf.p99} ms (2 processes) (goal < 10 ms)`,
        `load generator late by (p99): ${oneHalf.lateP99} ms (1 process), ${twoHalf.lateP99} ms (2 processes)`,
        "",
      ].join("\n"),
    );
    fs.mkdirSync(".bench", { recursive: true });
    const file = path.join(".bench", `scaleout-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({ withRedis, minimalPeak, onePeak, oneHalf, twoPeak, twoHalf }, null, 2),
    );
    process.stdout.write(`raw figures: ${file}\n`);
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    minimal.child.kill("SIGTERM");
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
  }
}

await main();
