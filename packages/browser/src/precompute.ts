import {
  type Solution,
  type SolveOptions,
  type SolveProgress,
  searchProofOfWork,
  settleOnce,
} from "./solver.js";

/**
 * Proofs of work solved before they are asked for. With its page token, `watchPage` is handed the
 * seed a proof_of_work challenge on the form's attempt will be sealed with, at the tenant's severe
 * difficulty (docs/api.md, page evidence), and solves it here while the person fills the form in. A
 * challenge issued after the submit carries that seed, and `solveProofOfWork` finds its answer here
 * instead of searching: at once when the search has ended, or by joining the search still running
 * (its workers, its progress) rather than starting another. An answer at the severe difficulty meets
 * every tier (sha256-prefix: a digest that starts with six zeros starts with four).
 */
interface Background {
  difficulty: number;
  controller: AbortController;
  /** The answer, or undefined when the search stopped without one (stopped, a worker that failed). */
  answer: Promise<Solution | undefined>;
  found: Solution | undefined;
  /** Where its progress reports go: the challenge that joined it, if one did. */
  onProgress: ((progress: SolveProgress) => void) | undefined;
}

/** By seed: searches running or ended with an answer (a failed or stopped one is dropped). */
const backgrounds = new Map<string, Background>();

export interface BackgroundOptions {
  seed: string;
  difficulty: number;
  /** Workers to run; default navigator.hardwareConcurrency (at least 1, at most 16). */
  workers?: number;
  /** The worker script; default beside this script. */
  workerUrl?: string | URL;
}

/**
 * Starts solving `seed` in the background, once per seed; it ends by itself when solved. Returns what
 * stops it (a page being left).
 */
export function solveInBackground(opts: BackgroundOptions): () => void {
  const running = backgrounds.get(opts.seed);
  if (running) return () => running.controller.abort();
  const controller = new AbortController();
  const background: Background = {
    difficulty: opts.difficulty,
    controller,
    answer: Promise.resolve(undefined),
    found: undefined,
    onProgress: undefined,
  };
  background.answer = searchProofOfWork({
    seed: opts.seed,
    difficulty: opts.difficulty,
    signal: controller.signal,
    ...(opts.workers === undefined ? {} : { workers: opts.workers }),
    ...(opts.workerUrl === undefined ? {} : { workerUrl: opts.workerUrl }),
    onProgress: (progress) => background.onProgress?.(progress),
  }).then(
    (solution) => {
      background.found = solution;
      return solution;
    },
    () => {
      if (backgrounds.get(opts.seed) === background) backgrounds.delete(opts.seed);
      return undefined;
    },
  );
  backgrounds.set(opts.seed, background);
  return () => controller.abort();
}

/**
 * Solves a sha256-prefix proof of work: with the page's own answer when it searched this seed at this
 * difficulty or more (`precomputed: true`; `ms` is the time waited here), else by searching on every
 * core (solver.ts). A search of the page's that cannot serve this challenge (another difficulty) is
 * stopped first, so that it does not take the cores from this one.
 */
export async function solveProofOfWork(opts: SolveOptions): Promise<Solution> {
  const started = performance.now();
  const background = backgrounds.get(opts.seed);
  if (background && background.difficulty >= opts.difficulty) {
    // A running search for more zeros than asked would take longer than a new one for fewer.
    const answer =
      background.found ??
      (background.difficulty === opts.difficulty ? await join(background, opts) : undefined);
    if (answer) return { ...answer, ms: performance.now() - started, precomputed: true };
  }
  if (background && !background.found) background.controller.abort();
  return searchProofOfWork(opts);
}

/**
 * Waits for a running background search as a search of this challenge's own would be waited for:
 * its progress goes to `opts.onProgress`; `opts.signal` stops it; it gives up (rejects "expired")
 * shortly before `opts.expiresAt`, leaving it running for the challenge issued next.
 */
function join(background: Background, opts: SolveOptions): Promise<Solution | undefined> {
  return new Promise<Solution | undefined>((resolve, reject) => {
    const finish = settleOnce(
      opts,
      reject,
      () => {
        if (background.onProgress === opts.onProgress) background.onProgress = undefined;
      },
      () => background.controller.abort(),
    );
    if (finish.settled()) return;
    background.onProgress = opts.onProgress;
    void background.answer.then((answer) => finish(() => resolve(answer)));
  });
}
