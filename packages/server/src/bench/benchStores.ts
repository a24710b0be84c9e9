import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startWarden, wardenCli } from "../lib/wardenProcess.js";
import { redisAnswers } from "../store/redis/redisCounters.js";

const PG_URL = process.env.WARDEN_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.WARDEN_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

export const STORES = ["SQLite", "PostgreSQL", "PostgreSQL + Redis"] as const;

/** A running `warden serve` and an API key with verify:write for its tenant. */
export interface BenchTarget {
  url: string;
  apiKey: string;
}

/**
 * Runs `measure` against a fresh `warden serve` on each store in turn: SQLite (a new file),
 * PostgreSQL (a new database, dropped afterwards) and PostgreSQL + Redis. A store whose server is
 * unreachable is skipped, said on stdout, and its result is undefined.
 */
export async function onEachStore<T>(
  measure: (target: BenchTarget) => Promise<T>,
): Promise<[(typeof STORES)[number], T | undefined][]> {
  const results: [(typeof STORES)[number], T | undefined][] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-bench-store-"));
  process.stdout.write("SQLite\n");
  try {
    results.push([
      "SQLite",
      await onStore({ WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "w.db")}` }, measure),
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  const pgUp = await admin.connect().then(
    () => true,
    () => false,
  );
  const redisUp = pgUp && (await redisAnswers(REDIS_URL));
  for (const store of ["PostgreSQL", "PostgreSQL + Redis"] as const) {
    const redis = store === "PostgreSQL + Redis";
    if (!pgUp || (redis && !redisUp)) {
      process.stdout.write(`${store} is not reachable: SKIPPED\n`);
      results.push([store, undefined]);
      continue;
    }
    const database = `warden_bench_${randomBytes(5).toString("hex")}`;
    await admin.query(`create database ${database}`);
    const url = new URL(PG_URL);
    url.pathname = `/${database}`;
    process.stdout.write(`${store}\n`);
    try {
      const env = {
        WARDEN_DATABASE_URL: url.toString(),
        ...(redis ? { WARDEN_REDIS_URL: REDIS_URL, WARDEN_REDIS_KEY_PREFIX: `${database}:` } : {}),
      };
      results.push([store, await onStore(env, measure)]);
    } finally {
      await admin.query(`drop database if exists ${database} with (force)`);
    }
  }
  if (pgUp) await admin.end();
  return results;
}

async function onStore<T>(
  env: Record<string, string>,
  measure: (target: BenchTarget) => Promise<T>,
): Promise<T> {
  const warden = await startWarden({ WARDEN_RATE_LIMIT_MAX: "100000000", WARDEN_LOG_LEVEL: "warn", ...env });
  try {
    await wardenCli(env, "tenant", "create", "bench");
    const { apiKey } = JSON.parse(
      await wardenCli(env, "key", "create", "--tenant", "bench", "--scopes", "verify:write", "--json"),
    ) as { apiKey: string };
    return await measure({ url: warden.url, apiKey });
  } finally {
    await warden.stop();
  }
}
