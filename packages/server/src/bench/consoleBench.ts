import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { issueApiKey } from "../admin/apiKeys.js";
import { buildApp } from "../app.js";
import { loadConfig } from "../config.js";
import { buildDeps } from "../deps.js";
import { ALL_SCOPES } from "../store/interfaces.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { seedConsoleData } from "./consoleSeed.js";
import { load } from "./verifyLoad.js";

/**
 * The operator console on a large SQLite store: 1,000,000 events over 30 days and 200,000 feedback
 * observations (BENCH_CONSOLE_EVENTS, BENCH_CONSOLE_FEEDBACK), then
 *   1. each console page's data (the API calls the page makes, at once, as the page does): median
 *      and worst of five loads;
 *   2. verify's closed-loop throughput alone, then while a console user reloads every page in a loop,
 *      side by side (BENCH_CONSOLE_SECONDS each).
 */
const EVENTS = Number(process.env.BENCH_CONSOLE_EVENTS ?? 1_000_000);
const FEEDBACK = Number(process.env.BENCH_CONSOLE_FEEDBACK ?? 200_000);
const SECONDS = Number(process.env.BENCH_CONSOLE_SECONDS ?? 10);
const DAY = 86_400_000;

const serving = process.argv[2] === "--serve";
const dir = serving ? "" : fs.mkdtempSync(path.join(os.tmpdir(), "warden-console-bench-"));
const file = serving ? (process.argv[3] as string) : path.join(dir, "warden.db");

/** The server, in a process of its own (as in production): the load and the console user are not in it. */
async function serve(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${file}`,
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_LOG_LEVEL: "warn",
  });
  const deps = await buildDeps(config);
  const now = Date.now();
  await deps.store.tenants.create({ id: "bench", rawPii: false, logOnly: false, createdAt: now });
  const { apiKey } = await issueApiKey(deps.store, {
    tenantId: "bench",
    scopes: [...ALL_SCOPES],
    logOnly: false,
    now,
  });
  const app = await buildApp(deps);
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  await app.warmUp();
  process.stdout.write(`${JSON.stringify({ url, apiKey })}\n`);
  process.once("SIGTERM", () => {
    void app
      .close()
      .then(() => deps.store.close())
      .then(() => process.exit(0));
  });
}

function startServer(): Promise<{ child: ChildProcess; url: string; apiKey: string }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      if (out.includes("\n"))
        resolve({ child, ...(JSON.parse(out.split("\n")[0] as string) as { url: string; apiKey: string }) });
    });
    child.once("exit", (code) => reject(new Error(`the console bench server exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const now = Date.now();
  // The store's migrations make the schema; the seed then writes the rows directly.
  await (await openSqliteStore({ file, busyTimeoutMs: 5000 })).close();
  const t = performance.now();
  seedConsoleData(file, now, EVENTS, FEEDBACK);
  process.stdout.write(
    `seeded ${EVENTS} events and ${FEEDBACK} observations in ${Math.round((performance.now() - t) / 1000)} s\n`,
  );
  const { child, url, apiKey } = await startServer();
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
  const loadPage = async (urls: string[]) => {
    const started = performance.now();
    await Promise.all(
      urls.map(async (u) => {
        const res = await fetch(`${url}${u}`, { headers });
        if (res.status !== 200) throw new Error(`${u}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }),
    );
    return performance.now() - started;
  };

  process.stdout.write("\n| page (uncached) | median ms | worst ms |\n|---|---:|---:|\n");
  for (const [p, name] of Object.keys(pages).entries()) {
    const times: number[] = [];
    // A period of its own per page and load: pages that share a scan (calibration, what-if) do not
    // find it in the cache either.
    for (let i = 1; i <= 5; i++) times.push(await loadPage(pagesFor(100 * (p + 1) + i)[name] as string[]));
    times.sort((a, b) => a - b);
    process.stdout.write(
      `| ${name} | ${Math.round(times[2] as number)} | ${Math.round(times[4] as number)} |\n`,
    );
  }

  /** Verify's closed-loop throughput while a console user loads page after page, `thinkMs` apart. */
  const withUser = async (thinkMs: number) => {
    let browsing = true;
    let pageLoads = 0;
    const user = (async () => {
      while (browsing) {
        for (const urls of Object.values(pages)) {
          if (!browsing) break;
          await loadPage(urls);
          pageLoads++;
          if (thinkMs > 0) await new Promise((r) => setTimeout(r, thinkMs));
        }
      }
    })();
    const run = await load({ url, apiKey }, SECONDS);
    browsing = false;
    await user;
    return { run, pageLoads };
  };
  // Rounds of (alone, back to back, paced) side by side; each ratio against its round's alone figure.
  const ROUNDS = Number(process.env.BENCH_CONSOLE_ROUNDS ?? 3);
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
      const { run, pageLoads } = await withUser(thinkMs);
      const ratio = run.rps / alone.rps;
      ratios[label]?.push(ratio);
      process.stdout.write(
        `  with a console user loading pages ${label} (${pageLoads} pages): ${Math.round(run.rps)} req/s ` +
          `(p99 ${run.p99} ms), ratio ${ratio.toFixed(3)}\n`,
      );
    }
  }
  for (const [label, values] of Object.entries(ratios)) {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    process.stdout.write(
      `median ratio, a user loading pages ${label}: ${median.toFixed(3)} (verify throughput drop ${((1 - median) * 100).toFixed(1)}%)\n`,
    );
  }
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  fs.rmSync(dir, { recursive: true, force: true });
}

if (process.argv[2] === "--serve") await serve();
else await main();
