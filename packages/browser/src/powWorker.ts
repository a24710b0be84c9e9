import { searchBlock } from "./powKernel.js";
import { readScope, type ScopeView } from "./scopeView.js";

/**
 * One proof-of-work worker: searches its own block of nonces in slices, reporting the hashes done after
 * each slice, until it finds a nonce or is terminated by the page. Sent `{ probe: true }` instead, it
 * answers what this worker scope reads of the browser (collectSignals compares it with the page's).
 */
export interface PowTask {
  seed: string;
  difficulty: number;
  block: number;
}
export interface ProbeTask {
  probe: true;
}
export type PowMessage =
  | { type: "progress"; hashes: number }
  | { type: "found"; nonce: string; hashes: number };
export interface ProbeAnswer {
  type: "probe";
  view: ScopeView;
}

const SLICE = 1 << 18;
const scope = globalThis as unknown as {
  onmessage: ((event: { data: PowTask | ProbeTask }) => void) | null;
  postMessage(message: PowMessage | ProbeAnswer): void;
  navigator: Parameters<typeof readScope>[0];
};

scope.onmessage = (event) => {
  if ("probe" in event.data) {
    const canvas = () => (typeof OffscreenCanvas === "function" ? new OffscreenCanvas(1, 1) : undefined);
    scope.postMessage({ type: "probe", view: readScope(scope.navigator, canvas) });
    return;
  }
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
