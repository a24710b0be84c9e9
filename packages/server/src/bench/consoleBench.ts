import fs from "node:fs";
import os from "node:os";
import path from "node:path";
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

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-console-bench-"));
const file = path.join(dir, "warden.db");

async function main(): Promise<void> {
  const now = Date.now();
  // The store's migrations make the schema; the seed then writes the rows directly.
  await (await openSqliteStore({ file, busyTimeoutMs: 5000 })).close();
  let t = performance.now();
  seedConsoleData(file, now, EVENTS, FEEDBACK);
  process.stdout.write(
    `seeded ${EVENTS} events and ${FEEDBACK} observations in ${Math.round((performance.now() - t) / 1000)} s\n`,
  );

  const config = loadConfig({
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${file}`,
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_LOG_LEVEL: "warn",
  });
  const deps = await buildDeps(config);
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
  const headers = { authorization: `Bearer ${apiKey}` };
  const since = new Date(now - 31 * DAY).toISOString();
  const period = `since=${since}&until=${new Date(now + 1000).toISOString()}`;
  const pages: Record<string, string[]> = {
    overview: [`/v1/stats/decisions?${period}`, `/v1/stats/challenges?${period}`],
    events: [`/v1/events?${period}&limit=50`],
    outcomes: [`/v1/stats/outcomes?${period}`, `/v1/feedback/quarantined?${period}`],
    calibration: [`/v1/stats/calibration?${period}`],
    "what-if": [`/v1/stats/what-if?${period}&falseAllow=2`],
  };
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

  process.stdout.write("\n| page | median ms | worst ms |\n|---|---:|---:|\n");
  for (const [name, urls] of Object.entries(pages)) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) times.push(await loadPage(urls));
    times.sort((a, b) => a - b);
    process.stdout.write(
      `| ${name} | ${Math.round(times[2] as number)} | ${Math.round(times[4] as number)} |\n`,
    );
  }

  const alone = await load({ url, apiKey }, SECONDS);
  let browsing = true;
  let pageLoads = 0;
  const user = (async () => {
    while (browsing) {
      for (const urls of Object.values(pages)) {
        if (!browsing) break;
        await loadPage(urls);
        pageLoads++;
      }
    }
  })();
  const during = await load({ url, apiKey }, SECONDS);
  browsing = false;
  await user;
  t = during.rps / alone.rps;
  process.stdout.write(
    `\nverify alone: ${Math.round(alone.rps)} req/s (p99 ${alone.p99} ms); while a console user loaded ${pageLoads} pages: ` +
      `${Math.round(during.rps)} req/s (p99 ${during.p99} ms); ratio ${t.toFixed(3)} (drop ${((1 - t) * 100).toFixed(1)}%)\n`,
  );
  await app.close();
  await deps.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

await main();
