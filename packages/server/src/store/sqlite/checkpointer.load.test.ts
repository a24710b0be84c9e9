import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir, testEvent } from "../../testing/harness.js";
import { openSqliteStore } from "./sqliteStore.js";

const dir = tempDir("warden-wal-");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes without pause (eight writers at a time), the way a loaded server does, and samples the WAL. */
async function sustainedWrites(
  file: string,
  restartFrames: number,
): Promise<{ maxWal: number; last: number }> {
  const store = await openSqliteStore({
    file,
    busyTimeoutMs: 5000,
    checkpoint: { intervalMs: 5, restartFrames, journalSizeLimit: 256 * 1024 },
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
    const bounded = await sustainedWrites(path.join(dir, "bounded.db"), 256);
    // Never restarting (what PASSIVE checkpoints alone do under load) lets it grow with the writes.
    const unbounded = await sustainedWrites(path.join(dir, "unbounded.db"), Number.MAX_SAFE_INTEGER);
    // 12,000 events and counters write tens of MB of log; 256 frames is 1 MiB.
    expect(unbounded.last).toBeGreaterThan(24 * 1024 * 1024);
    expect(bounded.maxWal).toBeLessThan(16 * 1024 * 1024);
    expect(bounded.last).toBeLessThan(16 * 1024 * 1024);
  }, 60_000);
});
