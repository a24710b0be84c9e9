import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type SQLite from "better-sqlite3";

/**
 * Runs WAL checkpoints on a worker thread with its own connection. By default SQLite checkpoints
 * inside a committing write, synchronously, which would stall the event loop while pages are copied
 * and fsynced. PASSIVE checkpoints never block writers; one that finds the database busy just waits
 * for the next tick. If the worker dies, the main connection goes back to checkpointing itself, so
 * the WAL can never grow without bound.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
const timer = setInterval(() => {
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch { /* busy: next tick */ }
}, workerData.intervalMs);
parentPort.on("message", () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(raw: SQLite.Database, file: string, intervalMs = 100): Checkpointer {
  raw.pragma("wal_autocheckpoint = 0");
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, intervalMs } });
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    worker.once("exit", () => {
      if (!stopping && raw.open) raw.pragma("wal_autocheckpoint = 1000");
      resolve();
    });
  });
  worker.once("error", () => {
    // The exit handler restores SQLite's own checkpointing.
  });
  return {
    stop: async () => {
      stopping = true;
      // Keep the event loop alive until the worker has closed its connection.
      worker.ref();
      worker.postMessage("stop");
      await exited;
    },
  };
}
