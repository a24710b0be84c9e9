import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startWarden, wardenCli } from "../lib/wardenProcess.js";
import { redisAnswers } from "../store/redis/redisCounters.js";
import { type BurstRun, burst } from "./burstLoad.js";

/**
 * Bursts of simultaneous verifies (closed loop, concurrency 1 to 64) against a real `warden serve`
 * on each store: SQLite, PostgreSQL, PostgreSQL + Redis. Reports, per level, the share of degraded
 * verdicts and the median and p99 latency over ROUNDS rounds. Stores whose server is unreachable
 * are skipped, and the table says so.
 *
 *   BENCH_BURST_LEVELS   concurrency levels (default 1,2,4,8,12,16,32,64)
 *   BENCH_BURST_ROUNDS   rounds per level (default 5)
 *   BENCH_IDEMPOTENT=1   every request carries its own Idempotency-Key
 */
const LEVELS = (process.env.BENCH_BURST_LEVELS ?? "1,2,4,8,12,16,32,64").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_BURST_ROUNDS ?? 5);
const PG_URL = process.env.WARDEN_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.WARDEN_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

interface Row {
  store: string;
  levels: (BurstRun[] | undefined)[];
}

async function measure(env: Record<string, string>): Promise<BurstRun[][]> {
  const warden = await startWarden({ WARDEN_RATE_LIMIT_MAX: "100000000", WARDEN_LOG_LEVEL: "warn", ...env });
  try {
    await wardenCli(env, "tenant", "create", "bench");
    const { apiKey } = JSON.parse(
      await wardenCli(env, "key", "create", "--tenant", "bench", "--scopes", "verify:write", "--json"),
    ) as { apiKey: string };
    const target = { url: warden.url, apiKey };
    await burst(target, 4, 50);
    const out: BurstRun[][] = [];
    for (const c of LEVELS) {
      const rounds: BurstRun[] = [];
      // About 200 requests a round, at least 10 per caller.
      for (let r = 0; r < ROUNDS; r++) rounds.push(await burst(target, c, Math.max(10, Math.round(200 / c))));
      out.push(rounds);
    }
    return out;
  } finally {
    await warden.stop();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

function cell(rounds: BurstRun[] | undefined): string {
  if (!rounds) return "skipped";
  const requests = rounds.reduce((s, r) => s + r.requests, 0);
  const degraded = rounds.reduce((s, r) => s + r.degraded, 0);
  const failed = rounds.reduce((s, r) => s + r.non200 + r.errors, 0);
  const share = ((100 * degraded) / requests).toFixed(1);
  return `${share}% / ${median(rounds.map((r) => r.p50))} / ${median(rounds.map((r) => r.p99))}${failed ? ` (${failed} failed)` : ""}`;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-burst-"));
  rows.push({
    store: "SQLite",
    levels: await measure({ WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "w.db")}` }),
  });
  fs.rmSync(dir, { recursive: true, force: true });

  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  const pgUp = await admin.connect().then(
    () => true,
    () => false,
  );
  const withRedis = pgUp && (await redisAnswers(REDIS_URL));
  for (const redis of [false, true]) {
    const store = redis ? "PostgreSQL + Redis" : "PostgreSQL";
    if (!pgUp || (redis && !withRedis)) {
      process.stdout.write(`${store} is not reachable: its row is SKIPPED\n`);
      rows.push({ store, levels: LEVELS.map(() => undefined) });
      continue;
    }
    const database = `warden_burst_${randomBytes(5).toString("hex")}`;
    await admin.query(`create database ${database}`);
    const url = new URL(PG_URL);
    url.pathname = `/${database}`;
    try {
      rows.push({
        store,
        levels: await measure({
          WARDEN_DATABASE_URL: url.toString(),
          ...(redis ? { WARDEN_REDIS_URL: REDIS_URL, WARDEN_REDIS_KEY_PREFIX: `${database}:` } : {}),
        }),
      });
    } finally {
      await admin.query(`drop database if exists ${database} with (force)`);
    }
  }
  if (pgUp) await admin.end();

  process.stdout.write(
    [
      "",
      `bursts: closed loop, ${ROUNDS} rounds per level, each request its own /24${process.env.BENCH_IDEMPOTENT === "1" ? ", each with an Idempotency-Key" : ""}; degraded share / median p50 ms / median p99 ms`,
      "",
      `| store | ${LEVELS.map((c) => `concurrency ${c}`).join(" | ")} |`,
      `|---|${LEVELS.map(() => "---").join("|")}|`,
      ...rows.map((r) => `| ${r.store} | ${r.levels.map(cell).join(" | ")} |`),
      "",
    ].join("\n"),
  );
  fs.mkdirSync(".bench", { recursive: true });
  const file = path.join(".bench", `burst-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  fs.writeFileSync(file, JSON.stringify({ levels: LEVELS, rounds: ROUNDS, rows }, null, 2));
  process.stdout.write(`raw figures: ${file}\n`);
}

await main();
