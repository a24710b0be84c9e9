import type { ProbeAnswer } from "./powWorker.js";
import { readScope, type ScopeField, type ScopeView, scopeMismatch } from "./scopeView.js";
import { workerUrlOr } from "./solver.js";
import { startWorker } from "./trustedTypes.js";

/**
 * What the page can tell Warden about its own browser, for the form to carry to your server (field
 * `wardenSignals`), which forwards it as `subject.browserSignals`. Only what incriminates counts (a
 * page under a bot's control can report anything, so a clean report proves nothing):
 * - `webdriver`: navigator.webdriver, true in a browser driven through WebDriver or the DevTools
 *   protocol with the stock automation flags;
 * - `mismatch`: what a worker of this page reads differently from the page itself (scopeView.ts);
 * - `workerHeadless`: the worker's user agent names a headless browser.
 */
export interface BrowserSignals {
  webdriver: boolean;
  mismatch?: ScopeField[];
  workerHeadless?: boolean;
}

export interface SignalOptions {
  /** The worker script (warden-pow-worker.js); default beside this script. */
  workerUrl?: string | URL;
  /** How long to wait for the worker's answer; default 3000 ms. Without one, only `webdriver` is sent. */
  timeoutMs?: number;
}

const pageCanvas = () => (typeof document === "undefined" ? undefined : document.createElement("canvas"));

/** What a worker of this page reads, or undefined when no worker could answer in time. */
function workerView(url: string | URL | undefined, timeoutMs: number): Promise<ScopeView | undefined> {
  if (!url || typeof Worker === "undefined") return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = startWorker(url, "warden-probe");
    } catch {
      return resolve(undefined);
    }
    const done = (view: ScopeView | undefined) => {
      clearTimeout(timer);
      worker.terminate();
      resolve(view);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    worker.onmessage = (event: MessageEvent<ProbeAnswer>) =>
      done(event.data?.type === "probe" ? event.data.view : undefined);
    worker.onerror = () => done(undefined);
    worker.postMessage({ probe: true });
  });
}

export async function collectSignals(opts: SignalOptions = {}): Promise<BrowserSignals> {
  const nav = typeof navigator === "undefined" ? undefined : navigator;
  const signals: BrowserSignals = { webdriver: nav?.webdriver === true };
  if (!nav) return signals;
  const page = readScope(nav as Parameters<typeof readScope>[0], pageCanvas);
  const worker = await workerView(workerUrlOr(opts.workerUrl), opts.timeoutMs ?? 3000);
  if (!worker) return signals;
  const mismatch = scopeMismatch(page, worker);
  if (mismatch.length > 0) signals.mismatch = mismatch;
  if (/headless/i.test(worker.userAgent ?? "") && !/headless/i.test(page.userAgent ?? "")) {
    signals.workerHeadless = true;
  }
  return signals;
}
