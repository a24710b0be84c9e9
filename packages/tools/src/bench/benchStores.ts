import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { redisAnswers } from "@warden/server/dist/store/redis/redisCounters.js";
import { startWarden, wardenCli } from "@warden/server/dist-testing/testing/wardenProcess.js";
import pg from "pg";

const PG_URL = process.env.WARDEN_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.WARDEN_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

export const STORES = ["SQLite", "PostgreSQL", "PostgreSQL + Redis"] as const;

/** BENCH_STORES (comma-separated store names, e.g. "PostgreSQL") limits a run to those stores. */
const chosen = (store: (typeof STORES)[number]): boolean =>
  process.env.BENCH_STORES === undefined ||
  process.env.BENCH_STORES.split(",").some((s) => s.trim().toLowerCase() === store.toLowerCase());

/** A running `warden serve` and an API key with verify:write for its tenant. */
export interface BenchTarget {
  url: string;
  apiKey: string;
  /** The server's process, for its CPU time (processCpu.ts). */
  pid?: number | undefined;
  /** The store's settings the server runs with (WARDEN_DATABASE_URL; Redis's when it has Redis). */
  store?: Record<string, string>;
}

type StoreName = (typeof STORES)[number];

/** A store made ready for one `warden serve`: its environment, and how to remove it afterwards. */
interface PreparedStore {
  env: Record<string, string>;
  remove(): Promise<void>;
}

/**
 * A fresh store of the kind named: SQLite (a new file), PostgreSQL (a new database, dropped
 * afterwards) or PostgreSQL + Redis (keys under the database's own prefix). Undefined when its server
 * is unreachable, said on stdout.
 */
async function prepare(store: StoreName): Promise<PreparedStore | undefined> {
  if (store === "SQLite") {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-bench-store-"));
    return {
      env: { WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "w.db")}` },
      remove: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const redis = store === "PostgreSQL + Redis";
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  const reachable =
    (await admin.connect().then(
      () => true,
      () => false,
    )) &&
    (!redis || (await redisAnswers(REDIS_URL)));
  if (!reachable) {
    await admin.end().catch(() => undefined);
    process.stdout.write(`${store} is not reachable: SKIPPED\n`);
    return undefined;
  }
  const database = `warden_bench_${randomBytes(5).toString("hex")}`;
  await admin.query(`create database ${database}`);
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  return {
    env: {
      WARDEN_DATABASE_URL: url.toString(),
      ...(redis ? { WARDEN_REDIS_URL: REDIS_URL, WARDEN_REDIS_KEY_PREFIX: `${database}:` } : {}),
    },
    remove: async () => {
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.end();
    },
  };
}

/**
 * Runs `measure` against a fresh `warden serve` on each store in turn (SQLite, PostgreSQL,
 * PostgreSQL + Redis). A store whose server is unreachable, or left out by BENCH_STORES, has the
 * result undefined.
 */
export async function onEachStore<T>(
  measure: (target: BenchTarget) => Promise<T>,
): Promise<[StoreName, T | undefined][]> {
  const results: [StoreName, T | undefined][] = [];
  for (const store of STORES) {
    const prepared = chosen(store) ? await prepare(store) : undefined;
    if (!prepared) {
      results.push([store, undefined]);
      continue;
    }
    process.stdout.write(`${store}\n`);
    try {
      const warden = await startBenchWarden(prepared.env);
      try {
        results.push([store, await measure(warden.target)]);
      } finally {
        await warden.stop();
      }
    } finally {
      await prepared.remove();
    }
  }
  return results;
}

/**
 * Starts a fresh `warden serve` on every store at once and hands them all to `measure`, so that a
 * bench can alternate between them and compare figures taken moments apart on a noisy machine.
 */
export async function onAllStoresAtOnce<T>(
  measure: (targets: [StoreName, BenchTarget | undefined][]) => Promise<T>,
): Promise<T> {
  const prepared: [StoreName, PreparedStore | undefined][] = [];
  const running: Awaited<ReturnType<typeof startBenchWarden>>[] = [];
  try {
    for (const store of STORES) prepared.push([store, chosen(store) ? await prepare(store) : undefined]);
    const targets: [StoreName, BenchTarget | undefined][] = [];
    for (const [store, p] of prepared) {
      if (!p) {
        targets.push([store, undefined]);
        continue;
      }
      const warden = await startBenchWarden(p.env);
      running.push(warden);
      targets.push([store, warden.target]);
    }
    return await measure(targets);
  } finally {
    for (const warden of running) await warden.stop();
    for (const [, p] of prepared) await p?.remove();
  }
}

/** A `warden serve` on `env` with a tenant and a verify:write key (no rate limit in the way). */
async function startBenchWarden(
  env: Record<string, string>,
): Promise<{ target: BenchTarget; stop(): Promise<unknown> }> {
  const warden = await startWarden({ WARDEN_RATE_LIMIT_MAX: "100000000", WARDEN_LOG_LEVEL: "warn", ...env });
  try {
    await wardenCli(env, "tenant", "create", "bench");
    const { apiKey } = JSON.parse(
      await wardenCli(env, "key", "create", "--tenant", "bench", "--scopes", "verify:write", "--json"),
    ) as { apiKey: string };
    return {
      target: { url: warden.url, apiKey, pid: warden.child.pid, store: env },
      stop: () => warden.stop(),
    };
  } catch (err) {
    await warden.stop();
    throw err;
  }
}
