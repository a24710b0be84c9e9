import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { CompiledQuery } from "kysely";
import type { ReadMeter } from "../interfaces.js";

/**
 * Long reads (ledger aggregates over millions of observations) on a worker thread with its own
 * read-only connection. better-sqlite3 is synchronous: the ledger summary over 1,000,000
 * observations held the event loop for about 1.4 s, and every verify in flight would have answered
 * the degraded challenge. WAL mode lets this second connection read committed data while the main one
 * writes. If the worker cannot start or dies, reads run on the main connection again (correct, only
 * blocking), never fail for that reason.
 */
const WORKER_SOURCE = `
// Loaded without require: an eval'd worker inherits the process's flags, and under --input-type=module
// its source is an ES module, where require is not defined.
const { parentPort, workerData } = process.getBuiltinModule("node:worker_threads");
const Database = process.getBuiltinModule("node:module").createRequire(workerData.driver)(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true, timeout: workerData.busyTimeoutMs });
// Long reads yield the CPU to verify: on Linux this thread gets the lowest priority (nice 19), found by
// its thread id (setpriority on a thread id sets that thread only). Elsewhere it keeps the default.
try {
  const tid = Number(process.getBuiltinModule("node:fs").readlinkSync("/proc/thread-self").split("/").pop());
  process.getBuiltinModule("node:os").setPriority(tid, 19);
} catch { /* not Linux, or not allowed: the default priority */ }
parentPort.on("message", ({ id, sql, parameters }) => {
  const started = performance.now();
  try {
    const rows = db.prepare(sql).all(parameters);
    parentPort.postMessage({ id, rows, ms: performance.now() - started });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err), ms: performance.now() - started });
  }
});
`;

export interface ReadWorker {
  /** Resolves the query's rows; rejects with the driver's error. Tells `meter` the time it ran. */
  all<R>(query: CompiledQuery<R>, meter?: ReadMeter): Promise<R[]>;
  /**
   * Holds reads back: resolves once the worker has no read running (later ones wait in the queue),
   * so that the checkpointer can start the WAL over (checkpointer.ts). Until `release`.
   */
  hold(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

export function startReadWorker(
  file: string,
  busyTimeoutMs: number,
  fallback: <R>(query: CompiledQuery<R>, meter?: ReadMeter) => Promise<R[]>,
): ReadWorker {
  interface Read {
    id: number;
    query: CompiledQuery<unknown>;
    meter: ReadMeter | undefined;
    resolve: (rows: unknown[]) => void;
    reject: (err: Error) => void;
  }
  // One read at a time goes to the worker (it runs them one by one anyway): the others wait here, where
  // `hold` can keep them while the checkpointer starts the log over. A read running on the worker pins
  // its snapshot's WAL frames, and back-to-back reads (console readers in a loop) pinned some frame at
  // every moment: the log could never start over and grew by hundreds of megabytes a minute under
  // verify's writes, and the checkpointer held every write for its restart's busy wait in vain.
  const queue: Read[] = [];
  let running: Read | undefined;
  let nextId = 0;
  let alive = true;
  let held = false;
  let idle: (() => void) | undefined;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver: createRequire(import.meta.url).resolve("better-sqlite3"), file, busyTimeoutMs },
  });
  worker.unref();
  const next = () => {
    if (running || held || !alive) return;
    const read = queue.shift();
    if (!read) {
      // Let the process exit when no read is out.
      worker.unref();
      return;
    }
    running = read;
    worker.ref();
    worker.postMessage({ id: read.id, sql: read.query.sql, parameters: read.query.parameters });
  };
  worker.on("message", (message: { id: number; rows?: unknown[]; error?: string; ms: number }) => {
    const read = running;
    if (!read || read.id !== message.id) return;
    running = undefined;
    read.meter?.(message.ms);
    if (message.error !== undefined) read.reject(new Error(message.error));
    else read.resolve(message.rows ?? []);
    if (held) {
      worker.unref();
      idle?.();
      idle = undefined;
    } else next();
  });
  const exited = new Promise<void>((resolve) => {
    worker.once("exit", () => {
      alive = false;
      running?.reject(new Error("the SQLite read worker stopped"));
      running = undefined;
      // Reads still queued run on the main connection.
      for (const read of queue.splice(0)) fallback(read.query, read.meter).then(read.resolve, read.reject);
      idle?.();
      idle = undefined;
      resolve();
    });
  });
  worker.once("error", () => {
    // exit follows: the running read is rejected there, queued and later ones run on the main connection.
  });
  return {
    all: <R>(query: CompiledQuery<R>, meter?: ReadMeter) => {
      if (!alive) return fallback(query, meter);
      return new Promise<R[]>((resolve, reject) => {
        queue.push({ id: nextId++, query, meter, resolve: resolve as (rows: unknown[]) => void, reject });
        next();
      });
    },
    hold: () => {
      held = true;
      if (!running) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idle = resolve;
      });
    },
    release: () => {
      held = false;
      next();
    },
    close: async () => {
      if (!alive) return;
      await worker.terminate();
      await exited;
    },
  };
}
