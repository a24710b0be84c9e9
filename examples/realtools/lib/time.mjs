// Waiting, without leaving timers behind (a pending timer keeps Node running after the work is done),
// and cleaning up after browsers.
import fs from "node:fs";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `promise`, or a rejection with `message` after `ms`; the timer is cleared either way. */
export async function withTimeout(promise, ms, message) {
  let timer;
  try {
    return await Promise.race([
      promise,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Removes a directory a browser or server just used: its helper processes can still be writing for a
 * moment after the main process exits (ENOTEMPTY), so removal is retried, and a leftover only warns
 * (everything is under the run's temp dir, which is removed last).
 */
export async function removeDir(dir) {
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (err) {
    process.stderr.write(`warning: could not remove ${dir}: ${err?.message ?? err}\n`);
  }
}
