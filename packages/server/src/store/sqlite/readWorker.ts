import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { CompiledQuery } from "kysely";

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
  try {
    parentPort.postMessage({ id, rows: db.prepare(sql).all(parameters) });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
`;

export interface ReadWorker {
  /** Resolves the query's rows; rejects with the driver's error. */
  all<R>(query: CompiledQuery<R>): Promise<R[]>;
  close(): Promise<void>;
}

export function startReadWorker(
  file: string,
  busyTimeoutMs: number,
  fallback: <R>(query: CompiledQuery<R>) => Promise<R[]>,
): ReadWorker {
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let alive = true;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver: createRequire(import.meta.url).resolve("better-sqlite3"), file, busyTimeoutMs },
  });
  worker.unref();
  worker.on("message", (message: { id: number; rows?: unknown[]; error?: string }) => {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (pending.size === 0) worker.unref();
    if (message.error !== undefined) waiting.reject(new Error(message.error));
    else waiting.resolve(message.rows ?? []);
  });
  const exited = new Promise<void>((resolve) => {
    worker.once("exit", () => {
      alive = false;
      for (const waiting of pending.values()) waiting.reject(new Error("the SQLite read worker stopped"));
      pending.clear();
      resolve();
    });
  });
  worker.once("error", () => {
    // exit follows: pending reads are rejected there and later ones run on the main connection.
  });
  return {
    all: <R>(query: CompiledQuery<R>) => {
      if (!alive) return fallback(query);
      return new Promise<R[]>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
        // Keep the process alive while a read is out; let it exit when none is.
        worker.ref();
        worker.postMessage({ id, sql: query.sql, parameters: query.parameters });
      });
    },
    close: async () => {
      if (!alive) return;
      await worker.terminate();
      await exited;
    },
  };
}
