import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { issueApiKey } from "../admin/apiKeys.js";
import { buildApp } from "../app.js";
import { loadConfig } from "../config.js";
import { buildDeps } from "../deps.js";
import { ALL_SCOPES, type RemovedRows } from "../store/interfaces.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { seedConsoleData } from "./consoleSeed.js";
import { loopWatch } from "./loopWatch.js";
import { steadyLoad } from "./steadyLoad.js";
import { body, load, SETTLE_SECONDS } from "./verifyLoad.js";

/**
 * What retention costs verify on SQLite, where every write shares one connection and one thread: a
 * store seeded with BENCH_RETENTION_EVENTS (300,000) events over 30 days, all past the retention,
 * and a fifth of them with a feedback observation (the backlog a first pass meets when retention is
 * turned on); verify at one steady rate (half its closed-loop peak, or BENCH_RETENTION_RATE) for
 * BENCH_RETENTION_SECONDS alone, then while the server removes half the backlog, twice: verify's
 * degraded share and p99, the server loop's longest block, and how long the removal took.
 */
const EVENTS = Number(process.env.BENCH_RETENTION_EVENTS ?? 300_000);
const SECONDS = Number(process.env.BENCH_RETENTION_SECONDS ?? 15);
const DAY = 86_400_000;

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

function startServer(): Promise<{ child: ChildProcess; url: string; apiKey: string }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", file], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line)
        resolve({ child, ...(JSON.parse(line) as { url: string; apiKey: string }) });
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
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
  // Events over the 30 days from 230 to 200 days ago; the two rounds remove the older half, then the rest.
  seedConsoleData(file, now - 200 * DAY, EVENTS, Math.round(EVENTS / 5));
  const server = await startServer();
  const { child } = server;
  try {
    const endpoint = {
      origin: server.url,
      path: "/v1/verify",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body,
    };
    const rate = Number(process.env.BENCH_RETENTION_RATE ?? 0) || Math.round((await load(server, 5)).rps / 2);
    process.stdout.write(
      `\n${EVENTS} events past the retention; verify at ${rate} req/s (open loop, ${SECONDS} s after ${SETTLE_SECONDS} s not counted)\n\n` +
        "| round | verify | degraded share | p99 ms | loop's longest block ms | events removed | removal s |\n" +
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for (const [round, cutoff] of [now - 215 * DAY, now - 180 * DAY].entries()) {
      for (const removing of [false, true]) {
        await steadyLoad([endpoint], SETTLE_SECONDS, rate);
        child.send("watch");
        const removal = removing ? reply<{ removed: RemovedRows; ms: number }>(child, "removed") : undefined;
        if (removing) child.send({ remove: cutoff });
        const run = await steadyLoad([endpoint], SECONDS, rate);
        child.send("unwatch");
        const { blockMs } = await reply<{ blockMs: number }>(child, "blockMs");
        const done = await removal;
        const sent = Math.round(rate * SECONDS);
        const share = (((run.degraded ?? 0) + run.non2xx + run.errors) / sent) * 100;
        process.stdout.write(
          `| ${round + 1} | ${removing ? "while removing" : "alone"} | ${share.toFixed(2)}% | ${run.p99} | ${blockMs} | ${done?.removed.events ?? ""} | ${done ? (done.ms / 1000).toFixed(1) : ""} |\n`,
        );
      }
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (serving) await serve();
else await main();
