import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { issueApiKey } from "@warden/server/dist/admin/apiKeys.js";
import { buildApp } from "@warden/server/dist/app.js";
import { loadConfig } from "@warden/server/dist/config.js";
import { buildDeps } from "@warden/server/dist/deps.js";
import { ALL_SCOPES } from "@warden/server/dist/domain.js";
import { openPostgresStore } from "@warden/server/dist/store/postgres/postgresStore.js";
import { openSqliteStore } from "@warden/server/dist/store/sqlite/sqliteStore.js";
import { freePort, startWarden, WARDEN_BIN } from "@warden/server/dist-testing/testing/wardenProcess.js";
import pg from "pg";
import { seedConsoleData, seedConsoleDataPostgres } from "./consoleSeed.js";
import { loopWatch } from "./loopWatch.js";
import { steadyLoad } from "./steadyLoad.js";
import { body, load, SETTLE_SECONDS } from "./verifyLoad.js";

/**
 * The operator console on a large store (SQLite, or PostgreSQL with BENCH_CONSOLE_STORE=postgres):
 * 1,000,000 events over 30 days and 200,000 feedback observations (BENCH_CONSOLE_EVENTS,
 * BENCH_CONSOLE_FEEDBACK), then
 *   1. each console page's data (the API calls the page makes, at once, as the page does): median
 *      and worst of five loads;
 *   2. verify's closed-loop throughput alone, then while a console user reloads every page in a loop,
 *      side by side (BENCH_CONSOLE_SECONDS each);
 *   3. verify at a steady rate (half its closed-loop peak, or BENCH_CONSOLE_RATE) alone and while
 *      BENCH_CONSOLE_READERS (12) console readers, each with an API key of its own, loop over the
 *      console's reads with a 50,000-row CSV export among them: verify's degraded share and p99 side
 *      by side, and the server's longest event-loop block, in BENCH_CONSOLE_READER_ROUNDS rounds.
 * BENCH_CONSOLE_SCENARIOS (pages,user,readers) picks the parts to run; BENCH_CONSOLE_SERVER_ARGS gives the
 * server's process Node options of its own (a CPU profile: "--cpu-prof --cpu-prof-dir=DIR").
 *
 * BENCH_CONSOLE_WORKERS=N runs part 3 alone against the real `warden serve --workers N` instead of the
 * app in a process of its own, started afresh each round; BENCH_CONSOLE_WARDEN_BINS (bin/warden.js
 * files, comma-separated, default this checkout's) are then alternated within each round, so two
 * builds are measured side by side on one seed, each start warmed up by BENCH_CONSOLE_WARMUP_SECONDS
 * (30) of verify at the rate, not counted. BENCH_CONSOLE_READER_KEYS=one gives every reader the same
 * API key (one operator's scripts) instead of a key each.
 */
const EVENTS = Number(process.env.BENCH_CONSOLE_EVENTS ?? 1_000_000);
const FEEDBACK = Number(process.env.BENCH_CONSOLE_FEEDBACK ?? 200_000);
const SECONDS = Number(process.env.BENCH_CONSOLE_SECONDS ?? 10);
const READERS = Number(process.env.BENCH_CONSOLE_READERS ?? 12);
const READER_ROUNDS = Number(process.env.BENCH_CONSOLE_READER_ROUNDS ?? 2);
const SCENARIOS = new Set((process.env.BENCH_CONSOLE_SCENARIOS ?? "pages,user,readers").split(","));
/** `sqlite` (a file of its own) or `postgres` (a database of its own on BENCH_CONSOLE_POSTGRES_URL's server). */
const STORE = process.env.BENCH_CONSOLE_STORE ?? "sqlite";
const POSTGRES_URL = process.env.BENCH_CONSOLE_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const DAY = 86_400_000;
const WORKERS = Number(process.env.BENCH_CONSOLE_WORKERS ?? 0);
const ONE_KEY = process.env.BENCH_CONSOLE_READER_KEYS === "one";
/** Verify at the steady rate after each start of `warden serve --workers`, not counted. */
const WORKERS_WARMUP_SECONDS = Number(process.env.BENCH_CONSOLE_WARMUP_SECONDS ?? 30);
const WARDEN_BINS = (process.env.BENCH_CONSOLE_WARDEN_BINS ?? WARDEN_BIN)
  .split(",")
  .map((b) => path.resolve(b));

const serving = process.argv[2] === "--serve";
const reading = process.argv[2] === "--readers";
const dir = serving || reading ? "" : fs.mkdtempSync(path.join(os.tmpdir(), "warden-console-bench-"));
/** The served store: a SQLite file, or a PostgreSQL database's URL. */
const databaseName = `warden_console_bench_${process.pid}`;
const file = serving
  ? (process.argv[3] as string)
  : STORE === "postgres"
    ? Object.assign(new URL(POSTGRES_URL), { pathname: `/${databaseName}` }).toString()
    : path.join(dir, "warden.db");

/** The server, in a process of its own (as in production): the load and the console user are not in it. */
async function serve(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    WARDEN_DATABASE_URL: file.startsWith("postgres") ? file : `sqlite:${file}`,
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_LOG_LEVEL: "warn",
  });
  const deps = await buildDeps(config);
  const now = Date.now();
  await deps.store.tenants.create({ id: "bench", rawPii: false, logOnly: false, createdAt: now });
  const issue = async () =>
    (await issueApiKey(deps.store, { tenantId: "bench", scopes: [...ALL_SCOPES], logOnly: false, now }))
      .apiKey;
  const apiKey = await issue();
  const readerKeys = await readerKeysOf(issue);
  const app = await buildApp(deps);
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  await app.warmUp();
  const watch = loopWatch();
  process.on("message", (message) => {
    if (message === "watch") watch.start();
    if (message === "unwatch") process.send?.({ blockMs: watch.stop() });
  });
  process.stdout.write(`${JSON.stringify({ url, apiKey, readerKeys })}\n`);
  process.once("SIGTERM", () => {
    void app
      .close()
      .then(() => deps.store.close())
      .then(() => process.exit(0));
  });
}

/**
 * The console readers' keys: each reader an operator of its own (a read budget each), or with
 * BENCH_CONSOLE_READER_KEYS=one every reader on one key.
 */
async function readerKeysOf(issue: () => Promise<string>): Promise<string[]> {
  if (ONE_KEY) return Array.from({ length: READERS }, () => "").fill(await issue());
  const keys: string[] = [];
  for (let i = 0; i < READERS; i++) keys.push(await issue());
  return keys;
}

interface Served {
  url: string;
  apiKey: string;
  readerKeys: string[];
}

function startServer(): Promise<{ child: ChildProcess } & Served> {
  // BENCH_CONSOLE_SERVER_ARGS: Node options for the server alone, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p".
  const nodeArgs = process.env.BENCH_CONSOLE_SERVER_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), "--serve", file], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let started = false;
    child.stdout?.on("data", (d) => {
      // Before its address and after it, what the server writes is its log (warnings, errors): passed on.
      if (started) {
        process.stderr.write(d);
        return;
      }
      out += d;
      const lines = out.split("\n");
      out = lines.pop() as string;
      for (const line of lines) {
        const served = started ? undefined : (JSON.parse(line) as Partial<Served>);
        if (served?.url !== undefined) {
          started = true;
          resolve({ child, ...(served as Served) });
        } else process.stderr.write(`${line}\n`);
      }
      if (started && out !== "") process.stderr.write(out);
    });
    child.once("exit", (code) => reject(new Error(`the console bench server exited with ${code}`)));
  });
}

/** What the readers did, counted by their process. */
interface Reads {
  reads: number;
  exports: number;
  limited: number;
  failed: number;
  megabytes: number;
}

/**
 * The console readers, in a process of their own (their downloads are not the load generator's
 * work): each loops over the console's reads for the last 31 days (the pages' data, attempts, reason
 * counts, two searches, the ledger's totals), `until` to the second as the console sends it, a
 * 50,000-row CSV export among them. A 429 is waited out as its Retry-After says.
 * Runs until SIGTERM, then prints its counts.
 */
async function readers(url: string, keys: string[], since: string): Promise<void> {
  const counts: Reads = { reads: 0, exports: 0, limited: 0, failed: 0, megabytes: 0 };
  process.once("SIGTERM", () => {
    process.stdout.write(`${JSON.stringify(counts)}\n`);
    process.exit(0);
  });
  const reader = async (apiKey: string, offset: number) => {
    const headers = { authorization: `Bearer ${apiKey}` };
    for (let pass = 0; ; pass++) {
      const period = `since=${since}&until=${new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()}`;
      const urls = [
        `/v1/stats/decisions?${period}`,
        `/v1/stats/challenges?${period}`,
        `/v1/events?${period}&limit=50`,
        `/v1/stats/outcomes?${period}`,
        `/v1/feedback/quarantined?${period}`,
        `/v1/stats/calibration?${period}`,
        `/v1/stats/what-if?${period}&falseAllow=2`,
        `/v1/events?${period}&format=csv&limit=50000`,
        `/v1/stats/attempts?${period}`,
        `/v1/stats/reasons?${period}`,
        // Searches: one person (their email hash's index), and a rare reason code (checked on each
        // event read until 50 are found), then the ledger's totals.
        `/v1/events?${period}&emailHash=${"0".repeat(61)}abc&limit=50`,
        `/v1/events?${period}&reasonCode=hosting_network&limit=50`,
        `/v1/ledger/summary?${period}`,
      ];
      // The readers start at different reads, so the exports do not all run at once.
      for (let i = 0; i < urls.length; i++) {
        const u = urls[(i + offset + pass) % urls.length] as string;
        const res = await fetch(`${url}${u}`, { headers }).catch(() => undefined);
        if (!res) {
          counts.failed++;
          continue;
        }
        const body = await res.arrayBuffer().catch(() => new ArrayBuffer(0));
        if (res.status === 429) {
          counts.limited++;
          await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after") ?? 1) * 1000));
        } else if (res.status !== 200) {
          counts.failed++;
        } else {
          counts.reads++;
          counts.megabytes += body.byteLength / 1e6;
          if (u.includes("format=csv")) counts.exports++;
        }
      }
    }
  };
  await Promise.all(keys.map((k, i) => reader(k, i)));
}

function startReaders(served: Served, since: string): { stop(): Promise<Reads> } {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), "--readers", served.url, JSON.stringify(served.readerKeys), since],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  // In production the readers are browsers and scripts on other machines; here they share the two
  // cores with the server and the load generator, so they get a lower CPU priority (nice 10).
  try {
    if (child.pid !== undefined) os.setPriority(child.pid, 10);
  } catch {
    // not allowed here: the default priority
  }
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  return {
    stop: async () => {
      const exited = new Promise<string>((resolve) =>
        child.once("exit", (code, signal) => resolve(signal ?? `code ${code}`)),
      );
      child.kill("SIGTERM");
      const how = await exited;
      const last = out.trim().split("\n").pop();
      if (!last) throw new Error(`the console readers' process printed no counts (it ended with ${how})`);
      return JSON.parse(last) as Reads;
    },
  };
}

/** Asks the server for its longest event-loop block since it was told to watch. */
function watchServer(child: ChildProcess): { stop(): Promise<number> } {
  child.send("watch");
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once("message", (m) => resolve((m as { blockMs: number }).blockMs));
        child.send("unwatch");
      }),
  };
}

async function main(): Promise<void> {
  const now = Date.now();
  const admin = STORE === "postgres" ? new pg.Client({ connectionString: POSTGRES_URL }) : undefined;
  const t = performance.now();
  // The store's migrations make the schema; the seed then writes the rows directly.
  if (admin) {
    await admin.connect();
    await admin.query(`create database ${databaseName}`);
    await (await openPostgresStore({ url: file, statementTimeoutMs: 60_000, poolSize: 2 })).close();
    await seedConsoleDataPostgres(file, now, EVENTS, FEEDBACK);
  } else {
    await (await openSqliteStore({ file, busyTimeoutMs: 5000 })).close();
    seedConsoleData(file, now, EVENTS, FEEDBACK);
  }
  process.stdout.write(
    `seeded ${EVENTS} events and ${FEEDBACK} observations (${STORE}) in ${Math.round((performance.now() - t) / 1000)} s\n`,
  );
  const cleanUp = async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    if (admin) {
      await admin.query(`drop database if exists ${databaseName} with (force)`);
      await admin.end();
    }
  };
  if (WORKERS > 0) {
    if (!admin)
      throw new Error(
        "BENCH_CONSOLE_WORKERS needs BENCH_CONSOLE_STORE=postgres (workers are PostgreSQL only)",
      );
    await withWorkers(new Date(now - 31 * DAY).toISOString(), now);
    await cleanUp();
    return;
  }
  const served = await startServer();
  const { child, url, apiKey } = served;
  const headers = { authorization: `Bearer ${apiKey}` };
  const since = new Date(now - 31 * DAY).toISOString();
  /**
   * Each page's calls for the last 31 days. `fresh` shifts the period's end by that many milliseconds:
   * a period the server has not read yet, so the timing below is the database's, never the server's
   * few-second cache of the period-wide scans.
   */
  const pagesFor = (fresh: number): Record<string, string[]> => {
    const period = `since=${since}&until=${new Date(now + 1000 + fresh).toISOString()}`;
    return {
      overview: [`/v1/stats/decisions?${period}`, `/v1/stats/challenges?${period}`],
      events: [`/v1/events?${period}&limit=50`],
      outcomes: [`/v1/stats/outcomes?${period}`, `/v1/feedback/quarantined?${period}`],
      calibration: [`/v1/stats/calibration?${period}`],
      "what-if": [`/v1/stats/what-if?${period}&falseAllow=2`],
    };
  };
  const pages = pagesFor(0);
  /** Times a page's calls; a 429 (the key's read budget) is waited out as Retry-After says and not timed. */
  let budgetWaits = 0;
  const loadPage = async (urls: string[]): Promise<number> => {
    const started = performance.now();
    let refused: number | undefined;
    await Promise.all(
      urls.map(async (u) => {
        const res = await fetch(`${url}${u}`, { headers });
        if (res.status === 429) refused = Number(res.headers.get("retry-after") ?? 1);
        else if (res.status !== 200) throw new Error(`${u}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }),
    );
    if (refused === undefined) return performance.now() - started;
    budgetWaits++;
    await new Promise((r) => setTimeout(r, (refused as number) * 1000));
    return loadPage(urls);
  };

  if (SCENARIOS.has("pages"))
    process.stdout.write("\n| page (uncached) | median ms | worst ms |\n|---|---:|---:|\n");
  for (const [p, name] of SCENARIOS.has("pages") ? Object.keys(pages).entries() : []) {
    const times: number[] = [];
    // A period of its own per page and load: pages that share a scan (calibration, what-if) do not
    // find it in the cache either.
    for (let i = 1; i <= 5; i++) times.push(await loadPage(pagesFor(100 * (p + 1) + i)[name] as string[]));
    times.sort((a, b) => a - b);
    process.stdout.write(
      `| ${name} | ${Math.round(times[2] as number)} | ${Math.round(times[4] as number)} |\n`,
    );
  }
  if (SCENARIOS.has("pages"))
    process.stdout.write(`(page loads that waited out the read budget: ${budgetWaits})\n`);

  /** Verify's closed-loop throughput while a console user loads page after page, `thinkMs` apart. */
  const withUser = async (thinkMs: number) => {
    let browsing = true;
    let pageLoads = 0;
    let failedPages = 0;
    const user = (async () => {
      while (browsing) {
        for (const urls of Object.values(pages)) {
          if (!browsing) break;
          // A refused read (a 503 while the store is busy) is counted, not fatal, while verify is loaded.
          await loadPage(urls).then(
            () => pageLoads++,
            (err: Error) => {
              failedPages++;
              process.stderr.write(`console user: ${err.message}\n`);
            },
          );
          if (thinkMs > 0) await new Promise((r) => setTimeout(r, thinkMs));
        }
      }
    })();
    const run = await load({ url, apiKey }, SECONDS);
    browsing = false;
    await user;
    return { run, pageLoads, failedPages };
  };
  // Rounds of (alone, back to back, paced) side by side; each ratio against its round's alone figure.
  const ROUNDS = SCENARIOS.has("user") ? Number(process.env.BENCH_CONSOLE_ROUNDS ?? 3) : 0;
  const ratios: Record<string, number[]> = { "back to back": [], "a page every 2 s": [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const alone = await load({ url, apiKey }, SECONDS);
    process.stdout.write(
      `\nround ${round}: verify alone ${Math.round(alone.rps)} req/s (p99 ${alone.p99} ms)\n`,
    );
    for (const [label, thinkMs] of [
      ["back to back", 0],
      ["a page every 2 s", 2000],
    ] as const) {
      const { run, pageLoads, failedPages } = await withUser(thinkMs);
      const ratio = run.rps / alone.rps;
      ratios[label]?.push(ratio);
      process.stdout.write(
        `  with a console user loading pages ${label} (${pageLoads} pages${failedPages ? `, ${failedPages} failed` : ""}): ${Math.round(run.rps)} req/s ` +
          `(p99 ${run.p99} ms), ratio ${ratio.toFixed(3)}\n`,
      );
    }
  }
  for (const [label, values] of ROUNDS > 0 ? Object.entries(ratios) : []) {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    process.stdout.write(
      `median ratio, a user loading pages ${label}: ${median.toFixed(3)} (verify throughput drop ${((1 - median) * 100).toFixed(1)}%)\n`,
    );
  }

  if (SCENARIOS.has("readers")) await withReaders(served, since);
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  await cleanUp();
}

const verifyEndpoint = (served: Served) => ({
  origin: served.url,
  path: "/v1/verify",
  headers: { authorization: `Bearer ${served.apiKey}`, "content-type": "application/json" },
  body,
});

/** One verify run at the steady rate, alone or with the readers: what part 3 reports of it. */
interface ReaderRun {
  share: number;
  p99: number;
  lateP99: number | undefined;
  blockMs: number | undefined;
  reads: Reads | undefined;
}

/**
 * Verify at `rate` (open loop: steadyLoad.ts) for SECONDS after SETTLE_SECONDS not counted, with the
 * console readers when `withThem`: verify's degraded share (degraded, non-2xx and failed answers over
 * requests sent), its p99, and the server loop's longest block when the server can be watched.
 */
async function readerRun(
  served: Served & { child?: ChildProcess },
  since: string,
  rate: number,
  withThem: boolean,
): Promise<ReaderRun> {
  const them = withThem ? startReaders(served, since) : undefined;
  const endpoint = verifyEndpoint(served);
  if (SETTLE_SECONDS > 0) await steadyLoad([endpoint], SETTLE_SECONDS, rate);
  const watch = served.child ? watchServer(served.child) : undefined;
  const run = await steadyLoad([endpoint], SECONDS, rate);
  const blockMs = await watch?.stop();
  const reads = await them?.stop();
  const sent = Math.round(rate * SECONDS);
  return {
    share: ((run.degraded ?? 0) + run.non2xx + run.errors) / sent,
    p99: run.p99,
    lateP99: run.lateP99,
    blockMs,
    reads,
  };
}

const readsCell = (reads: Reads | undefined) =>
  reads ? `${reads.reads} (${reads.exports}, ${reads.limited}, ${reads.failed})` : "–";
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? Number.NaN;
const readerKeysLabel = () => `${READERS} console readers${ONE_KEY ? " on one key" : ""}`;

/**
 * Verify at one steady rate (open loop: steadyLoad.ts) alone, then with the console readers, in
 * rounds side by side: its degraded share and p99, and the server's longest event-loop block.
 */
async function withReaders(served: { child: ChildProcess } & Served, since: string): Promise<void> {
  const target = { url: served.url, apiKey: served.apiKey };
  // One export alone first (three times): how long it takes and the server loop's longest block.
  const exportUrl = `${served.url}/v1/events?since=${since}&until=${new Date().toISOString()}&format=csv&limit=50000`;
  for (let i = 1; i <= 3; i++) {
    const watch = watchServer(served.child);
    const started = performance.now();
    const res = await fetch(exportUrl, { headers: { authorization: `Bearer ${served.apiKey}` } });
    const bytes = (await res.arrayBuffer()).byteLength;
    const ms = performance.now() - started;
    process.stdout.write(
      `${i === 1 ? "\n" : ""}one 50,000-row CSV export alone (${res.status}, ${(bytes / 1e6).toFixed(1)} MB): ` +
        `${Math.round(ms)} ms, server loop's longest block ${await watch.stop()} ms\n`,
    );
  }
  const rate = Number(process.env.BENCH_CONSOLE_RATE ?? 0) || Math.round((await load(target, 5)).rps / 2);
  process.stdout.write(
    `\nverify at ${rate} req/s (open loop, ${SECONDS} s after ${SETTLE_SECONDS} s not counted), alone and with ${readerKeysLabel()}\n\n` +
      "| round | console readers | verify degraded | verify p99 ms | late p99 ms | server loop's longest block ms | reads (exports, 429s, failed) |\n" +
      "|---|---|---:|---:|---:|---:|---|\n",
  );
  const shares: Record<string, number[]> = { none: [], readers: [] };
  for (let round = 1; round <= READER_ROUNDS; round++) {
    for (const withThem of [false, true]) {
      const run = await readerRun(served, since, rate, withThem);
      shares[withThem ? "readers" : "none"]?.push(run.share);
      process.stdout.write(
        `| ${round} | ${withThem ? READERS : "none"} | ${(run.share * 100).toFixed(2)}% | ${run.p99} | ${run.lateP99} | ${run.blockMs} | ${readsCell(run.reads)} |\n`,
      );
    }
  }
  const [none, withThem] = [median(shares.none ?? []), median(shares.readers ?? [])];
  process.stdout.write(
    `median degraded share: ${(none * 100).toFixed(2)}% alone, ${(withThem * 100).toFixed(2)}% with ${READERS} readers ` +
      `(${((withThem - none) * 100).toFixed(2)} points)\n`,
  );
}

/**
 * `warden serve --workers WORKERS` of `bin` on the seeded database, every worker listening; its keys
 * were made beforehand (they are in the database).
 */
async function startWorkers(
  bin: string,
  keys: Omit<Served, "url">,
): Promise<Served & { stop(): Promise<unknown> }> {
  const adminPort = await freePort();
  const warden = await startWarden(
    {
      WARDEN_DATABASE_URL: file,
      WARDEN_RATE_LIMIT_MAX: "100000000",
      WARDEN_LOG_LEVEL: "warn",
      WARDEN_ADMIN_PORT: String(adminPort),
    },
    60_000,
    ["--workers", String(WORKERS)],
    { command: process.execPath, args: [bin] },
  );
  for (;;) {
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    if (Number(/^warden_workers_listening (\d+)/m.exec(text)?.[1]) === WORKERS) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url: warden.url, ...keys, stop: () => warden.stop() };
}

/**
 * Part 3 against `warden serve --workers WORKERS`, each build of WARDEN_BINS started afresh in every
 * round (the builds alternated, the first one first in odd rounds), alone then with the readers.
 */
async function withWorkers(since: string, now: number): Promise<void> {
  const store = await openPostgresStore({ url: file, statementTimeoutMs: 60_000, poolSize: 2 });
  await store.tenants.create({ id: "bench", rawPii: false, logOnly: false, createdAt: now });
  const issue = async () =>
    (await issueApiKey(store, { tenantId: "bench", scopes: [...ALL_SCOPES], logOnly: false, now })).apiKey;
  const keys = { apiKey: await issue(), readerKeys: await readerKeysOf(issue) };
  await store.close();
  const builds = WARDEN_BINS.map((bin) => ({ bin, name: path.relative(process.cwd(), bin) || bin }));
  let rate = Number(process.env.BENCH_CONSOLE_RATE ?? 0);
  if (rate === 0) {
    const first = await startWorkers((builds[0] as (typeof builds)[number]).bin, keys);
    rate = Math.round((await load({ url: first.url, apiKey: keys.apiKey }, 5)).rps / 2);
    await first.stop();
  }
  process.stdout.write(
    `\nwarden serve --workers ${WORKERS}: verify at ${rate} req/s (open loop, ${SECONDS} s after ${SETTLE_SECONDS} s not counted), ` +
      `alone and with ${readerKeysLabel()}\n\n` +
      "| round | build | verify degraded alone | with readers | verify p99 ms alone / with | reads (exports, 429s, failed) |\n" +
      "|---|---|---:|---:|---:|---|\n",
  );
  const shares = new Map(builds.map((b) => [b.bin, { none: [] as number[], readers: [] as number[] }]));
  for (let round = 1; round <= READER_ROUNDS; round++) {
    const order = round % 2 === 1 ? builds : [...builds].reverse();
    for (const build of order) {
      const served = await startWorkers(build.bin, keys);
      try {
        // A fresh server's first 15–25 s of load are degraded on their own (docs/benchmarks.md,
        // "On PostgreSQL"): not counted.
        await steadyLoad([verifyEndpoint(served)], WORKERS_WARMUP_SECONDS, rate);
        const alone = await readerRun(served, since, rate, false);
        const withThem = await readerRun(served, since, rate, true);
        shares.get(build.bin)?.none.push(alone.share);
        shares.get(build.bin)?.readers.push(withThem.share);
        process.stdout.write(
          `| ${round} | ${build.name} | ${(alone.share * 100).toFixed(2)}% | ${(withThem.share * 100).toFixed(2)}% | ` +
            `${alone.p99} / ${withThem.p99} | ${readsCell(withThem.reads)} |\n`,
        );
      } finally {
        await served.stop();
      }
    }
  }
  for (const build of builds) {
    const { none, readers } = shares.get(build.bin) ?? { none: [], readers: [] };
    process.stdout.write(
      `${build.name}: median degraded share ${(median(none) * 100).toFixed(2)}% alone, ${(median(readers) * 100).toFixed(2)}% ` +
        `with the readers (${((median(readers) - median(none)) * 100).toFixed(2)} points)\n`,
    );
  }
}

if (serving) await serve();
else if (reading)
  await readers(
    process.argv[3] as string,
    JSON.parse(process.argv[4] as string) as string[],
    process.argv[5] as string,
  );
else await main();
