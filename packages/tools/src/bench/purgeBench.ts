import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { openSqliteStore } from "@warden/server/dist/store/sqlite/sqliteStore.js";
import { seedConsoleData } from "./consoleSeed.js";
import { loopWatch } from "./loopWatch.js";

/**
 * Housekeeping on the SQLite store: how long purging a minute's worth of expired counters takes, and
 * how long it holds the event loop at most (requests wait for exactly that). 300,000 rows is a minute
 * of five new counters per verify at 1,000 verifies a second. Then the same for retention: removing
 * BENCH_PURGE_EVENTS (200,000) events past the retention, a fifth of them with a feedback
 * observation (the backlog of a first pass after retention is turned on).
 */
const ROWS = Number(process.env.BENCH_PURGE_ROWS ?? 300_000);
const DAY = 86_400_000;
const EVENTS = Number(process.env.BENCH_PURGE_EVENTS ?? 200_000);

/**
 * Runs `work` while watching the event loop: its time, the loop's longest and p99 delay (wall clock:
 * what a request waited, other processes on the machine included) and its longest block of the main
 * thread's own CPU time (loopWatch.ts: what this process alone held it for).
 */
async function watched<T>(
  work: () => Promise<T>,
): Promise<{ result: T; ms: number; max: number; p99: number; cpuMax: number }> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const cpu = loopWatch();
  delay.enable();
  cpu.start();
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  // One more turn, so a block at the very end is recorded too.
  await new Promise((resolve) => setTimeout(resolve, 5));
  delay.disable();
  return { result, ms, max: delay.max / 1e6, p99: delay.percentile(99) / 1e6, cpuMax: cpu.stop() };
}

const held = (w: { max: number; p99: number; cpuMax: number }) =>
  `event loop held at most ${w.max.toFixed(1)} ms (p99 ${w.p99.toFixed(1)} ms; main thread's own CPU at most ${w.cpuMax.toFixed(1)} ms at a time)`;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-purge-"));
  const file = path.join(dir, "warden.db");
  const store = await openSqliteStore({ file, busyTimeoutMs: 1000 });
  try {
    const w = 3_600_000;
    for (let i = 0; i < ROWS; i += 500) {
      const hits = Array.from({ length: Math.min(500, ROWS - i) }, () => ({
        name: `v:${randomBytes(32).toString("hex")}`,
        windowMs: w,
      }));
      await store.counters.hit(hits, 1000 * w);
    }
    const counters = await watched(() => store.counters.purgeExpired(3000 * w));
    console.log(
      `\nhousekeeping: purged ${counters.result} expired counters in ${counters.ms.toFixed(0)} ms; ` +
        held(counters),
    );

    const now = Date.now();
    await store.tenants.create({ id: "bench", rawPii: false, logOnly: false, createdAt: now });
    seedConsoleData(file, now - 200 * DAY, EVENTS, Math.round(EVENTS / 5));
    const events = await watched(() => store.removal.olderThan(now - 180 * DAY));
    console.log(
      `retention: removed ${events.result.events} events and ${events.result.observations} observations in ` +
        `${events.ms.toFixed(0)} ms (${((events.ms / events.result.events) * 1000).toFixed(0)} µs an event); ` +
        held(events),
    );
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
