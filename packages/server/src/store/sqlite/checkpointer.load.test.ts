import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { type CompiledQuery, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir, testEvent } from "../../testing/harness.js";
import { startCheckpointer, type WriteGate } from "./checkpointer.js";
import { startReadWorker } from "./readWorker.js";
import { openSqliteStore } from "./sqliteStore.js";

/**
 * On a memory file system where the machine has one: this proves the checkpointer's logic (the log
 * starts over), not the disk's speed. On a disk shared with other work an fsync can stall for seconds,
 * and a WAL written at full speed meanwhile grows with the stall, not with the logic under test.
 */
const MEMORY_FS = "/dev/shm";
const dir = fs.existsSync(MEMORY_FS)
  ? fs.mkdtempSync(path.join(MEMORY_FS, "warden-wal-"))
  : tempDir("warden-wal-");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes without pause (eight writers at a time), the way a loaded server does, and samples the WAL. */
async function sustainedWrites(
  file: string,
  restartFrames: number,
  journalSizeLimit: number,
): Promise<{ maxWal: number; last: number }> {
  const store = await openSqliteStore({
    file,
    busyTimeoutMs: 5000,
    checkpoint: { intervalMs: 5, restartFrames, journalSizeLimit },
  });
  const walFile = `${file}-wal`;
  let maxWal = 0;
  let written = 0;
  const writer = async (w: number) => {
    for (let i = 0; i < 1500; i++) {
      await Promise.all([
        store.events.record(testEvent(`evt_${w}_${i}`, { reasons: ["x".repeat(600)] }), undefined),
        store.counters.hit([{ name: `c${w}_${i}`, windowMs: 3_600_000 }], 1000),
      ]);
      if (++written % 500 === 0) maxWal = Math.max(maxWal, fs.statSync(walFile).size);
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
  const last = fs.statSync(walFile).size;
  const n = await store.events.get("t1", "evt_7_1499");
  expect(n?.id).toBe("evt_7_1499");
  await store.close();
  return { maxWal, last };
}

describe("WAL checkpointing under sustained writes", () => {
  it("keeps the WAL file bounded: the log starts over instead of growing with every write", async () => {
    const bounded = await sustainedWrites(path.join(dir, "bounded.db"), 256, 256 * 1024);
    // Never restarting (what PASSIVE checkpoints alone do under load) lets it grow with the writes; its
    // file is never truncated (limit -1), so its size is the longest log it held.
    const unbounded = await sustainedWrites(path.join(dir, "unbounded.db"), Number.MAX_SAFE_INTEGER, -1);
    // 12,000 events and counters write tens of MB of log (150 MB on a quiet machine); 256 frames is
    // 1 MiB. How far past that the log gets before a restart depends on how fast the machine answers
    // the hold (at this write rate, 10 ms of delay is about 1.5 MB), so the bound is read against the
    // unbounded run's log written side by side, not as a number of bytes.
    const sizes = JSON.stringify({ bounded, unbounded });
    expect(unbounded.last, sizes).toBeGreaterThan(12 * 1024 * 1024);
    expect(bounded.maxWal, sizes).toBeLessThan(unbounded.last / 3);
    // The writer truncates the file when the log starts over (journal_size_limit on its connection).
    expect(bounded.last, sizes).toBeLessThan(unbounded.last / 3);
  }, 60_000);
});

/**
 * Long reads back to back on the read worker (console readers in a loop) while one connection writes
 * without pause, with or without the checkpointer holding the reads for its restarts. Counts the
 * restarts: the writer truncates the WAL file each time the log starts over.
 */
async function writesBesideLongReads(
  file: string,
  holdReads: boolean,
): Promise<{ restarts: number; reads: number; maxWal: number; writesHeldMs: number; longestHoldMs: number }> {
  const raw = new SQLite(file);
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = NORMAL");
  raw.exec("create table t (n integer, pad text)");
  let paused = false;
  let resumed: (() => void) | undefined;
  let pausedAt = 0;
  let writesHeldMs = 0;
  let longestHoldMs = 0;
  const gate: WriteGate = {
    pause: async () => {
      paused = true;
      pausedAt = performance.now();
    },
    resume: () => {
      if (!paused) return;
      paused = false;
      const held = performance.now() - pausedAt;
      writesHeldMs += held;
      longestHoldMs = Math.max(longestHoldMs, held);
      resumed?.();
    },
  };
  const reader = startReadWorker(file, 1000, async () => {
    throw new Error("the read worker is gone");
  });
  const checkpointer = startCheckpointer(
    raw,
    file,
    gate,
    { intervalMs: 5, restartFrames: 256, journalSizeLimit: 256 * 1024 },
    holdReads ? reader : undefined,
  );
  // About 0.3 s of SQLite work per read, over a snapshot of the table (it reads t's first row).
  const longRead: CompiledQuery<unknown> = {
    sql: "with recursive r(i) as (select 1 union all select i + 1 from r where i < 3000000) select count(*) as c from r, (select n from t limit 1)",
    parameters: [],
    query: sql``.toOperationNode() as never,
    queryId: { queryId: "long-read" },
  };
  let running = true;
  let reads = 0;
  const readers = Array.from({ length: 4 }, async () => {
    while (running) {
      await reader.all(longRead);
      reads++;
    }
  });
  const insert = raw.prepare("insert into t values (?, ?)");
  const walFile = `${file}-wal`;
  let lastSize = 0;
  let restarts = 0;
  let maxWal = 0;
  const until = performance.now() + 4000;
  for (let i = 0; performance.now() < until; i++) {
    if (paused) await new Promise<void>((resolve) => (resumed = resolve));
    raw.transaction(() => {
      for (let j = 0; j < 20; j++) insert.run(i, "x".repeat(500));
    })();
    const size = fs.statSync(walFile).size;
    if (size < lastSize) restarts++;
    lastSize = size;
    maxWal = Math.max(maxWal, size);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  running = false;
  await Promise.all(readers);
  await checkpointer.stop();
  await reader.close();
  raw.close();
  return {
    restarts,
    reads,
    maxWal,
    writesHeldMs: Math.round(writesHeldMs),
    longestHoldMs: Math.round(longestHoldMs),
  };
}

describe("WAL checkpointing beside long reads", () => {
  it("starts the log over while reads run back to back: they wait for the restart, the log does not wait for them", async () => {
    const held = await writesBesideLongReads(path.join(dir, "held.db"), true);
    const unheld = await writesBesideLongReads(path.join(dir, "unheld.db"), false);
    const result = JSON.stringify({ held, unheld });
    expect(held.reads, result).toBeGreaterThan(4);
    expect(unheld.reads, result).toBeGreaterThan(4);
    // Without the hold, each restart waited its whole busy timeout (about 200 ms) for a read that
    // outlasted it, with every write held, and failed: 3.1-4.5 s of the 4 s held, one restart at
    // most. How many restarts the hold allows follows how fast this machine writes the log full
    // (3-5 on one machine, 1 on one half as fast): at least one, and more than without it.
    expect(held.restarts, result).toBeGreaterThanOrEqual(1);
    expect(unheld.restarts, result).toBeLessThanOrEqual(held.restarts);
    // And no write waits on a read: with the hold, a restart holds writes for milliseconds; without
    // it, for the restart's whole busy timeout, time after time.
    expect(held.longestHoldMs, result).toBeLessThan(unheld.longestHoldMs);
    expect(held.writesHeldMs, result).toBeLessThan(unheld.writesHeldMs / 5);
  }, 60_000);
});
