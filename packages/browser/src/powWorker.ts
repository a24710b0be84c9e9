import { searchBlock } from "./powKernel.js";

/**
 * One proof-of-work worker: searches its own block of nonces in slices, reporting the hashes done after
 * each slice, until it finds a nonce or is terminated by the page.
 */
export interface PowTask {
  seed: string;
  difficulty: number;
  block: number;
}
export type PowMessage =
  | { type: "progress"; hashes: number }
  | { type: "found"; nonce: string; hashes: number };

const SLICE = 1 << 18;
const scope = globalThis as unknown as {
  onmessage: ((event: { data: PowTask }) => void) | null;
  postMessage(message: PowMessage): void;
};

scope.onmessage = (event) => {
  const { seed, difficulty, block } = event.data;
  for (let from = 0; from < 2 ** 32; from += SLICE) {
    const result = searchBlock(seed, difficulty, block, from, Math.min(2 ** 32, from + SLICE));
    if (result.nonce !== undefined) {
      scope.postMessage({ type: "found", nonce: result.nonce, hashes: result.hashes });
      return;
    }
    scope.postMessage({ type: "progress", hashes: result.hashes });
  }
};
