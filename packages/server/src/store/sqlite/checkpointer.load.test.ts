import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir, testEvent } from "../../testing/harness.js";
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
