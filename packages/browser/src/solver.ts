import type { PowMessage, PowTask } from "./powWorker.js";
import { startWorker } from "./trustedTypes.js";

export interface SolveProgress {
  hashes: number;
  /** Over the last RATE_WINDOW_MS of reports (from the first report, so worker start-up is left out). */
  hashesPerSecond: number;
  elapsedMs: number;
  /** 16^difficulty: the expected number of hashes. */
  expectedHashes: number;
  /** 1 − e^(−hashes/expected): the chance a solver would have finished by now. */
  fraction: number;
}

export interface SolveOptions {
  seed: string;
  difficulty: number;
  /** The challenge's expiresAt: solving stops (rejects with code "expired") shortly before it. */
  expiresAt?: string | Date;
  signal?: AbortSignal;
  onProgress?: (progress: SolveProgress) => void;
  /** Workers to run; default navigator.hardwareConcurrency (at least 1, at most 16). */
  workers?: number;
  /** The worker script (dist/warden-pow-worker.js); default beside this script. */
  workerUrl?: string | URL;
}

export interface Solution {
  nonce: string;
  hashes: number;
  ms: number;
  /** The answer came from the page's own search, started before it was asked (precompute.ts). */
  precomputed?: true;
}

export class SolveError extends Error {
  constructor(
    readonly code: "expired" | "aborted" | "worker_failed",
    message: string,
  ) {
    super(message);
    this.name = "SolveError";
  }
}

/** Margin kept before expiresAt, for the completion round trip. */
export const EXPIRY_MARGIN_MS = 3000;
/** The hash rate is measured over this much of the most recent reports. */
const RATE_WINDOW_MS = 2000;

let defaultWorkerUrl: string | URL | undefined;
/** Set by the entry script: where warden-pow-worker.js is served. */
export function setDefaultWorkerUrl(url: string | URL): void {
  defaultWorkerUrl = url;
}
/** Where warden-pow-worker.js is served, unless a caller names another URL. */
export const workerUrlOr = (url: string | URL | undefined): string | URL | undefined =>
  url ?? defaultWorkerUrl;

/**
 * One settlement for a search (or a wait on one): `finish(fn)` runs `cleanUp` and `fn` once, whatever
 * comes first; `opts.signal` rejects it "aborted", and it rejects "expired" shortly before
 * `opts.expiresAt`. `settled()` is already true when the signal was aborted or the challenge expired.
 */
export function settleOnce(
  opts: Pick<SolveOptions, "signal" | "expiresAt">,
  reject: (err: SolveError) => void,
  cleanUp: () => void,
  onAbort: () => void = () => {},
): ((fn: () => void) => void) & { settled: () => boolean } {
  let settled = false;
  let expiryTimer: ReturnType<typeof setTimeout> | undefined;
  const aborted = () => {
    onAbort();
    finish(() => reject(new SolveError("aborted", "solving was aborted")));
  };
  const finish = Object.assign(
    (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (expiryTimer) clearTimeout(expiryTimer);
      opts.signal?.removeEventListener("abort", aborted);
      cleanUp();
      fn();
    },
    { settled: () => settled },
  );
  if (opts.signal?.aborted) {
    aborted();
    return finish;
  }
  opts.signal?.addEventListener("abort", aborted);
  if (opts.expiresAt !== undefined) {
    const left = new Date(opts.expiresAt).getTime() - Date.now() - EXPIRY_MARGIN_MS;
    if (left <= 0) finish(() => reject(new SolveError("expired", "the challenge has expired")));
    else
      expiryTimer = setTimeout(
        () => finish(() => reject(new SolveError("expired", "the challenge expired before it was solved"))),
        left,
      );
  }
  return finish;
}

/**
 * Searches a sha256-prefix proof of work on every core: each worker searches its own block of nonces;
 * the first answer wins and the others are stopped. No eval, no blob: workers load a script URL
 * (CSP `worker-src 'self'`), made a TrustedScriptURL by the `warden` policy where Trusted Types apply.
 * `solveProofOfWork` (precompute.ts) first looks for the page's own answer.
 */
export function searchProofOfWork(opts: SolveOptions): Promise<Solution> {
  const started = performance.now();
  const expected = 16 ** opts.difficulty;
  const count = Math.max(1, Math.min(16, opts.workers ?? navigator.hardwareConcurrency ?? 2));
  const url = workerUrlOr(opts.workerUrl);
  if (!url) return Promise.reject(new SolveError("worker_failed", "no worker URL: pass workerUrl"));
  const firstBlock = crypto.getRandomValues(new Uint32Array(1))[0] as number;
  return new Promise<Solution>((resolve, reject) => {
    const workers: Worker[] = [];
    let hashes = 0;
    /** Reports of the last RATE_WINDOW_MS (the oldest kept as the window's start). */
    const reports: { at: number; hashes: number }[] = [];
    const finish = settleOnce(opts, reject, () => {
      for (const w of workers) w.terminate();
    });
    if (finish.settled()) return;
    for (let i = 0; i < count; i++) {
      const worker = startWorker(url, `warden-pow-${i}`);
      workers.push(worker);
      worker.onmessage = (event: MessageEvent<PowMessage>) => {
        const message = event.data;
        hashes += message.hashes;
        if (message.type === "found") {
          const nonce = message.nonce;
          return finish(() => resolve({ nonce, hashes, ms: performance.now() - started }));
        }
        const now = performance.now();
        reports.push({ at: now, hashes });
        while (reports.length > 2 && now - (reports[1] as { at: number }).at >= RATE_WINDOW_MS)
          reports.shift();
        const from = reports[0] as { at: number; hashes: number };
        const elapsedMs = now - started;
        opts.onProgress?.({
          hashes,
          elapsedMs,
          hashesPerSecond: now > from.at ? ((hashes - from.hashes) * 1000) / (now - from.at) : 0,
          expectedHashes: expected,
          fraction: 1 - Math.exp(-hashes / expected),
        });
      };
      worker.onerror = (event) =>
        finish(() => reject(new SolveError("worker_failed", `the solver could not run: ${event.message}`)));
      const task: PowTask = { seed: opts.seed, difficulty: opts.difficulty, block: (firstBlock + i) >>> 0 };
      worker.postMessage(task);
    }
  });
}
