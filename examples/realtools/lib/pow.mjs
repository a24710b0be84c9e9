// Proof of work solved in Node, as a bot that tries would: @warden/browser's own kernel (its worker
// script, unchanged) on worker threads, one per core, each searching its own block of nonces.
import { randomInt } from "node:crypto";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

const WORKER_SCRIPT = fileURLToPath(import.meta.resolve("@warden/browser/warden-pow-worker.js"));

// The browser worker reads `onmessage` and calls `postMessage` on its global scope: both are bridged
// to the thread's port, then the script itself is loaded.
const BRIDGE = `
const { parentPort, workerData } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
globalThis.postMessage = (message) => parentPort.postMessage(message);
parentPort.on("message", (data) => globalThis.onmessage({ data }));
new Function(readFileSync(workerData.script, "utf8"))();
`;

/**
 * Solves a sha256-prefix challenge; resolves { nonce, hashes, ms }.
 * @param {string} seed
 * @param {number} difficulty
 * @param {number} [threads]
 */
export function solvePow(seed, difficulty, threads = Math.max(1, os.availableParallelism())) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const workers = [];
    let hashes = 0;
    let done = false;
    const finish = (fn) => {
      if (done) return;
      done = true;
      for (const w of workers) void w.terminate();
      fn();
    };
    const first = randomInt(2 ** 31);
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(BRIDGE, { eval: true, workerData: { script: WORKER_SCRIPT } });
      workers.push(worker);
      worker.on("message", (m) => {
        hashes += m.hashes ?? 0;
        if (m.type === "found") {
          finish(() => resolve({ nonce: m.nonce, hashes, ms: Math.round(performance.now() - started) }));
        }
      });
      worker.on("error", (err) => finish(() => reject(err)));
      worker.postMessage({ seed, difficulty, block: (first + i) >>> 0 });
    }
  });
}
