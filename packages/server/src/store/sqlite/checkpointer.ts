import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type SQLite from "better-sqlite3";

/**
 * Runs WAL checkpoints on a worker thread with its own connection. By default SQLite checkpoints
 * inside a committing write, synchronously, which would stall the event loop while pages are copied
 * and fsynced.
 *
 * PASSIVE checkpoints (every `intervalMs`) copy the log into the database without ever blocking
 * writers. But under sustained writes they never catch up with the end of the log, and SQLite only
 * starts the log over when a writer finds it fully copied, so the WAL file would grow without bound
 * (measured: 2 GB after 40,000 verifies). So once a PASSIVE pass leaves `restartFrames` or more
 * frames in the log, the worker first catches up and syncs the database file while writes go on (see
 * the worker's comment), then asks the main thread to hold its write batches back (`pause`), runs a
 * RESTART checkpoint (only the few frames written since are left to copy and sync), and lets the
 * writes go again; the next write starts the log over, and `journal_size_limit` truncates the file.
 * The main thread's event loop never blocks on it: held writes just wait in the group-commit queue.
 * If the worker does not answer within `maxPauseMs`, writes resume anyway.
 *
 * If the worker dies, the main connection goes back to checkpointing itself, so the WAL can never
 * grow without bound.
 */
const WORKER_SOURCE = `
const fs = process.getBuiltinModule("node:fs");
// Loaded without require: an eval'd worker inherits the process's flags, and under --input-type=module
// its source is an ES module, where require is not defined.
const { parentPort, workerData } = process.getBuiltinModule("node:worker_threads");
const Database = process.getBuiltinModule("node:module").createRequire(workerData.driver)(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
// For fsync only: any descriptor of the file flushes all its dirty pages.
const dbFd = fs.openSync(workerData.file, "r");
db.pragma("journal_size_limit = " + workerData.journalSizeLimit);
let waiting = false;
// Whether the main thread holds its long reads (readWorker.ts) for this restart: asked for as soon as
// the log is due one, so the read running then is the only one the restart waits for.
let readsHeld = !workerData.holdsReads;
const timer = setInterval(() => {
  if (waiting) return;
  try {
    let [state] = db.pragma("wal_checkpoint(PASSIVE)");
    // Reads held for a restart the log no longer needs (a write started it over) go again.
    if (!state || state.log < workerData.restartFrames) return release();
    if (!readsHeld) {
      waiting = true;
      parentPort.postMessage("holdReads");
      return;
    }
    // Get the slow work done before holding writes. A pass that cannot reach the end of the log (writes
    // keep coming) copies pages into the database file without syncing it: SQLite syncs only when the
    // log is fully copied, i.e. in the restart under the hold, which then flushed every page copied
    // since the last restart (measured: 6-35 ms a hold, growing with the database). So: passes back to
    // back until few frames are left, then rounds of an fsync of the database file here and one more
    // pass, until a pass copies few frames; the restart then copies and syncs only those.
    // The log keeps growing meanwhile: past four times the threshold, the hold comes at once.
    const ceiling = 4 * workerData.restartFrames;
    for (let pass = 0; pass < workerData.catchUpPasses && state.log < ceiling && state.log - state.checkpointed > workerData.holdFrames; pass++) {
      [state] = db.pragma("wal_checkpoint(PASSIVE)");
    }
    let copied = Number.POSITIVE_INFINITY;
    for (let round = 0; round < workerData.catchUpPasses && state.log < ceiling && copied > workerData.holdFrames; round++) {
      fs.fdatasyncSync(dbFd);
      const before = state.checkpointed;
      [state] = db.pragma("wal_checkpoint(PASSIVE)");
      copied = state.checkpointed - before;
    }
    // A write that found the log fully copied has started it over already.
    if (state.log < workerData.restartFrames) return release();
    // A reader's snapshot (a long console read on the read worker, another process) pins the frames
    // after it: a pass then copies nothing more. A restart would wait for that reader while every
    // write is held, so the restart waits for a pass that makes progress instead.
    const beforeHold = state.checkpointed;
    [state] = db.pragma("wal_checkpoint(PASSIVE)");
    if (state.log - state.checkpointed > workerData.holdFrames && state.checkpointed === beforeHold) return release();
    waiting = true;
    parentPort.postMessage("pause");
  } catch { release(); /* busy: next tick */ }
}, workerData.intervalMs);
/** No restart this time: the main thread lets its reads go again. */
function release() {
  if (!workerData.holdsReads || !readsHeld) return;
  readsHeld = false;
  parentPort.postMessage("releaseReads");
}
parentPort.on("message", (message) => {
  if (message === "readsHeld") {
    readsHeld = true;
    waiting = false;
  } else if (message === "paused") {
    try {
      db.pragma("busy_timeout = " + workerData.restartBusyMs);
      db.pragma("wal_checkpoint(RESTART)");
    } catch { /* busy (another process writing): the next pass tries again */ }
    db.pragma("busy_timeout = 0");
    waiting = false;
    readsHeld = !workerData.holdsReads;
    parentPort.postMessage("resume");
  } else if (message === "skip") {
    waiting = false;
    readsHeld = !workerData.holdsReads;
  } else if (message === "stop") {
    clearInterval(timer);
    fs.closeSync(dbFd);
    db.close();
    parentPort.close();
  }
});
`;

/** What the checkpointer needs from the write path: a way to hold write batches back. */
export interface WriteGate {
  pause(): Promise<void>;
  resume(): void;
}

/**
 * What it needs from this process's long reads (readWorker.ts): a way to let the running one finish
 * and hold the next, so that no snapshot of this process pins the log while it starts over.
 */
export interface ReadGate {
  hold(): Promise<void>;
  release(): void;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  /** Frames left after a PASSIVE pass that trigger a restart of the log (4096 frames = 16 MiB). */
  restartFrames?: number;
  /**
   * Before holding writes for a restart, PASSIVE passes run back to back (at most `catchUpPasses`,
   * and only while the log is under four times `restartFrames`) until at most `holdFrames` frames are
   * left uncopied, so the hold copies and syncs only those.
   */
  holdFrames?: number;
  catchUpPasses?: number;
  /** The WAL file is truncated back to this size when the log starts over. */
  journalSizeLimit?: number;
  /** How long writes are held at most for one restart. */
  maxPauseMs?: number;
  /**
   * How long a restart waits for this process's running long read to finish (reads, not writes,
   * wait meanwhile); past it the restart is skipped until the next pass.
   */
  maxReadWaitMs?: number;
}

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(
  raw: SQLite.Database,
  file: string,
  gate: WriteGate,
  options: CheckpointerOptions = {},
  reads?: ReadGate,
): Checkpointer {
  const intervalMs = options.intervalMs ?? 100;
  const maxPauseMs = options.maxPauseMs ?? 250;
  const maxReadWaitMs = options.maxReadWaitMs ?? 10_000;
  raw.pragma("wal_autocheckpoint = 0");
  // The connection that starts the log over is the writer's: SQLite truncates the WAL file there, to
  // the writer's own limit (without it the file keeps the size of the longest log it ever held).
  const journalSizeLimit = options.journalSizeLimit ?? 64 * 1024 * 1024;
  raw.pragma(`journal_size_limit = ${journalSizeLimit}`);
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver,
      file,
      intervalMs,
      restartFrames: options.restartFrames ?? 4096,
      holdFrames: options.holdFrames ?? 64,
      catchUpPasses: options.catchUpPasses ?? 8,
      journalSizeLimit,
      restartBusyMs: Math.max(1, maxPauseMs - 50),
      holdsReads: reads !== undefined,
    },
  });
  worker.unref();
  let stopping = false;
  let pauseTimer: NodeJS.Timeout | undefined;
  let readsHeld = false;
  let holdLimit: NodeJS.Timeout | undefined;
  const releaseReads = () => {
    clearTimeout(holdLimit);
    if (readsHeld) reads?.release();
    readsHeld = false;
  };
  const resume = () => {
    clearTimeout(pauseTimer);
    pauseTimer = undefined;
    gate.resume();
    releaseReads();
  };
  /** The running long read has finished (true), or it ran past maxReadWaitMs (false). */
  const readsIdle = async (): Promise<boolean> => {
    if (!reads) return true;
    readsHeld = true;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), maxReadWaitMs);
    });
    const idle = await Promise.race([reads.hold().then(() => true as const), gaveUp]);
    clearTimeout(timer);
    // Console reads never wait on the worker's messages alone: a restart takes a few passes and one
    // hold of the writes, so past this they go again whatever the worker is doing.
    if (idle) holdLimit = setTimeout(releaseReads, 10 * maxPauseMs + 1000).unref();
    return idle;
  };
  worker.on("message", (message) => {
    if (message === "holdReads" && !stopping) {
      // First the reads, then the writes: a restart waits for every reader of the log, and held
      // writes must never wait for a console read.
      void readsIdle().then((idle) => {
        if (idle && !stopping) {
          worker.postMessage("readsHeld");
          return;
        }
        releaseReads();
        worker.postMessage("skip");
      });
    } else if (message === "pause" && !stopping) {
      pauseTimer = setTimeout(() => {
        resume();
        worker.postMessage("skip");
      }, maxPauseMs);
      void gate.pause().then(() => {
        if (pauseTimer) worker.postMessage("paused");
      });
    } else if (message === "releaseReads") {
      releaseReads();
    } else if (message === "resume") {
      resume();
    }
  });
  const exited = new Promise<void>((resolve) => {
    worker.once("exit", () => {
      resume();
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
      resume();
      // Keep the event loop alive until the worker has closed its connection.
      worker.ref();
      worker.postMessage("stop");
      await exited;
    },
  };
}
