import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { issueApiKey } from "@warden/server/dist/admin/apiKeys.js";
import { buildApp } from "@warden/server/dist/app.js";
import { loadConfig } from "@warden/server/dist/config.js";
import { buildDeps } from "@warden/server/dist/deps.js";
import { ALL_SCOPES } from "@warden/server/dist/domain.js";
import type { RemovedRows } from "@warden/server/dist/store/interfaces.js";
import { openSqliteStore } from "@warden/server/dist/store/sqlite/sqliteStore.js";
import { seedConsoleData } from "./consoleSeed.js";
import { loopWatch } from "./loopWatch.js";
import { startServerProcess } from "./startBenchServer.js";
import { steadyLoad } from "./steadyLoad.js";
import { body, SETTLE_SECONDS } from "./verifyLoad.js";

/**
 * What retention costs verify on SQLite, where every write shares one connection and one thread.
 * Verify runs at one steady rate, BENCH_RETENTION_RATE (500 a second), for BENCH_RETENTION_SECONDS
 * (15) at a time, alone, then while the server removes events past the retention, in
 * BENCH_RETENTION_ROUNDS (3) rounds side by side:
 *   - a steady pass: a minute's worth of events at that rate (what each minute's pass removes once
 *     retention runs: the events of one minute, retention days ago);
 *   - with BENCH_RETENTION_BACKLOG (0: not run) set, a backlog of that many events (what the first
 *     passes meet when retention is turned on over an older store).
 * A fifth of the events carry a feedback observation. Reported: verify's degraded share and p99, the
 * server loop's longest block, and how long the removal took.
 */
const RATE = Number(process.env.BENCH_RETENTION_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_RETENTION_SECONDS ?? 15);
const ROUNDS = Number(process.env.BENCH_RETENTION_ROUNDS ?? 3);
const BACKLOG = Number(process.env.BENCH_RETENTION_BACKLOG ?? 0);
const DAY = 86_400_000;
/** The seed: each round's minute, then the backlog, over the 30 days from 230 to 200 days ago. */
const PASS = RATE * 60;
const EVENTS = PASS * ROUNDS + BACKLOG;

const serving = process.argv[2] === "--serve";
const dir = serving ? "" : fs.mkdtempSync(path.join(os.tmpdir(), "warden-retention-bench-"));
const file = serving ? (process.argv[3] as string) : path.join(dir, "warden.db");

/** The server in a process of its own; it removes events older than a cutoff when told. */
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
  const watch = loopWatch();
  process.on("message", (message: { remove?: number } | string) => {
    if (message === "watch") watch.start();
    if (message === "unwatch") process.send?.({ blockMs: watch.stop() });
    if (typeof message === "object" && message.remove !== undefined) {
      const started = performance.now();
      // What the housekeeping pass runs (housekeeping.ts), with the cutoff of this round.
      void deps.store.removal
        .olderThan(message.remove)
        .then((removed) => process.send?.({ removed, ms: Math.round(performance.now() - started) }));
    }
  });
  process.stdout.write(`${JSON.stringify({ url, apiKey })}\n`);
  process.once("SIGTERM", () => {
    void app
      .close()
      .then(() => deps.store.close())
      .then(() => process.exit(0));
  });
}

/** The server's next message that has `key` (a removal's outcome and the loop watch answer cross). */
const reply = <T>(child: ChildProcess, key: string): Promise<T> =>
  new Promise((resolve) => {
    const listen = (m: unknown) => {
      if (typeof m !== "object" || m === null || !(key in m)) return;
      child.off("message", listen);
      resolve(m as T);
    };
    child.on("message", listen);
  });

async function main(): Promise<void> {
  const now = Date.now();
  await (await openSqliteStore({ file, busyTimeoutMs: 5000 })).close();
  const oldest = now - 230 * DAY;
  seedConsoleData(file, now - 200 * DAY, EVENTS, Math.round(EVENTS / 5));
  /** The time before which the first `n` seeded events lie (the seed spreads them evenly). */
  const cutoffAfter = (n: number) => oldest + Math.ceil((n * 30 * DAY) / EVENTS);
  const server = await startServerProcess("retention", fileURLToPath(import.meta.url), ["--serve", file], {
    ipc: true,
  });
  const { child } = server;
  try {
    const endpoint = {
      origin: server.url,
      path: "/v1/verify",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body,
    };
    process.stdout.write(
      `\nverify at ${RATE} req/s (open loop, ${SECONDS} s after ${SETTLE_SECONDS} s not counted); a pass removes ${PASS} events\n\n` +
        "| round | verify | degraded share | p99 ms | loop's longest block ms | events removed | removal s |\n" +
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    const measure = async (label: string, cutoff: number | undefined) => {
      await steadyLoad([endpoint], SETTLE_SECONDS, RATE);
      child.send("watch");
      const removal =
        cutoff === undefined ? undefined : reply<{ removed: RemovedRows; ms: number }>(child, "removed");
      if (cutoff !== undefined) child.send({ remove: cutoff });
      const run = await steadyLoad([endpoint], SECONDS, RATE);
      child.send("unwatch");
      const { blockMs } = await reply<{ blockMs: number }>(child, "blockMs");
      const done = await removal;
      const sent = Math.round(RATE * SECONDS);
      const share = (((run.degraded ?? 0) + run.non2xx + run.errors) / sent) * 100;
      process.stdout.write(
        `| ${label} | ${share.toFixed(2)}% | ${run.p99} | ${blockMs} | ${done?.removed.events ?? ""} | ${done ? (done.ms / 1000).toFixed(1) : ""} |\n`,
      );
    };
    for (let round = 1; round <= ROUNDS; round++) {
      await measure(`${round} | alone`, undefined);
      await measure(`${round} | during a steady pass`, cutoffAfter(PASS * round));
    }
    if (BACKLOG > 0) {
      await measure("backlog | alone", undefined);
      await measure("backlog | during the backlog's removal", cutoffAfter(EVENTS));
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (serving) await serve();
else await main();
