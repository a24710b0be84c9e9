import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";

/**
 * Housekeeping on the SQLite store: how long purging a minute's worth of expired counters takes, and
 * how long it holds the event loop at most (requests wait for exactly that). 300,000 rows is a minute
 * of five new counters per verify at 1,000 verifies a second.
 */
const ROWS = Number(process.env.BENCH_PURGE_ROWS ?? 300_000);

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-purge-"));
  const store = await openSqliteStore({ file: path.join(dir, "warden.db"), busyTimeoutMs: 1000 });
  try {
    const w = 3_600_000;
    for (let i = 0; i < ROWS; i += 500) {
      const hits = Array.from({ length: Math.min(500, ROWS - i) }, () => ({
        name: `v:${randomBytes(32).toString("hex")}`,
        windowMs: w,
      }));
      await store.counters.hit(hits, 1000 * w);
    }
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const started = performance.now();
    const purged = await store.counters.purgeExpired(3000 * w);
    const ms = performance.now() - started;
    // One more turn, so a block at the very end is recorded too.
    await new Promise((resolve) => setTimeout(resolve, 5));
    delay.disable();
    console.log(
      `\nhousekeeping: purged ${purged} expired counters in ${ms.toFixed(0)} ms; ` +
        `event loop held at most ${(delay.max / 1e6).toFixed(1)} ms (p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms)`,
    );
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
