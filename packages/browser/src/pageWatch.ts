import { type LayoutProbe, type PageEnvironment, readEnvironment } from "./environment.js";
import { solveInBackground } from "./precompute.js";

/**
 * Evidence that a form's page ran and what happened on it, for the form to carry to your server
 * (field `wardenPage`), which forwards it to Warden as `subject.page`:
 * - a page token, asked for once when the watch starts (your server's `${base}/page` route, which
 *   calls Warden): Warden knows from it, without trusting this page, how long ago the page loaded;
 * - counts of trusted events between then and the submit: key presses, text inserted without a key
 *   press (what an automation tool's fill does), pastes, autofills, pointer moves and presses,
 *   touches, and events a script dispatched itself.
 * Nothing the person types is read or sent: only counts. Watching costs a few listeners (passive,
 * in the capture phase) and one request that does not delay the page.
 *
 * When Warden hands the page a proof of work with its token (the SDK's page route asks for one), the
 * page solves it in the background once its document is parsed, on workers, while the person fills
 * the form in: a challenge after the submit is sealed with that seed, and the widget finds the answer
 * ready (precompute.ts). The search ends when it is solved or the page is left.
 */
export interface PageBehaviour {
  elapsedMs: number;
  keys: number;
  inserted: number;
  pasted: number;
  autofilled: number;
  pointerMoves: number;
  clicks: number;
  touches: number;
  untrusted: number;
}

export interface PageReport {
  /** Absent when Warden could not be asked (the verify then meets the tenant's rule for it). */
  token?: string;
  behaviour: PageBehaviour;
  /** What the page read of its browser, with the token's layout probe measured (environment.ts). */
  environment?: PageEnvironment;
}

export interface PageWatchOptions {
  /** Where your server answers POST with `{ pageToken }`; default "/warden/challenge/page". */
  tokenUrl?: string;
  /** The document to watch; default the page's. */
  root?: Document;
  /**
   * Solve the proof of work Warden hands the page, in the background (default true): 16^difficulty
   * hashes once per page load (difficulty 6: about 2 s on two cores), so that a challenge does not
   * make the person wait after the submit.
   */
  precompute?: boolean;
  /** Workers for that search; default navigator.hardwareConcurrency (at least 1, at most 16). */
  precomputeWorkers?: number;
  /** The proof-of-work worker script; default beside this script (as for the widget). */
  workerUrl?: string | URL;
}

export interface PageWatch {
  /** The report to send with the form, as it stands now. */
  report(): Promise<PageReport>;
  /** Stops counting events; a proof of work still being solved runs on (a challenge may need it). */
  stop(): void;
}

const PASTE_TYPES = new Set([
  "insertFromPaste",
  "insertFromDrop",
  "insertFromPasteAsQuotation",
  "insertFromYank",
]);
/** Typing (and deleting) that a key press precedes, on a keyboard or an IME. */
const TYPED_TYPES = new Set(["insertText", "insertCompositionText", "insertLineBreak", "insertParagraph"]);

/**
 * The token, asked for now and, after a failure, again in the background (1, 2, 4, 8 s later): a token
 * asked for only at submit would show Warden a form sent the moment its page loaded.
 */
async function tokenWithRetries(url: string): Promise<IssuedToken | undefined> {
  for (let attempt = 0; ; attempt++) {
    const token = await fetchToken(url);
    if (token !== undefined || attempt === 4) return token;
    await new Promise((r) => setTimeout(r, 1000 * 2 ** attempt));
  }
}

/** A page token, with the layout probe and the proof of work Warden handed out with it (if any). */
interface IssuedToken {
  token: string;
  probe: LayoutProbe | undefined;
  pow: { seed: string; difficulty: number } | undefined;
}

/** The proof of work of a page-token answer, when it is one this package can solve. */
function readPow(value: unknown): IssuedToken["pow"] {
  if (typeof value !== "object" || value === null) return undefined;
  const { seed, difficulty, algorithm } = value as Record<string, unknown>;
  if (algorithm !== "sha256-prefix" || typeof seed !== "string" || seed.length > 256) return undefined;
  if (typeof difficulty !== "number" || !Number.isInteger(difficulty) || difficulty < 1 || difficulty > 16)
    return undefined;
  return { seed, difficulty };
}

async function fetchToken(url: string): Promise<IssuedToken | undefined> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      credentials: "same-origin",
    });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { pageToken?: unknown; probe?: unknown; pow?: unknown };
    if (typeof body.pageToken !== "string") return undefined;
    const probe =
      typeof body.probe === "object" && body.probe !== null ? (body.probe as LayoutProbe) : undefined;
    return { token: body.pageToken, probe, pow: readPow(body.pow) };
  } catch {
    return undefined;
  }
}

/** Once the document has a body (the probe is laid out in it). */
const bodyReady = (doc: Document): Promise<void> =>
  doc.body
    ? Promise.resolve()
    : new Promise((resolve) => doc.addEventListener("DOMContentLoaded", () => resolve(), { once: true }));

/** Solves the page's proof of work in the background until it is solved or the page is left. */
function precompute(pow: { seed: string; difficulty: number }, opts: PageWatchOptions, root: Document): void {
  // Workers that cannot start here (a CSP without worker-src 'self') end the search at once: a
  // challenge then searches as it would have without it.
  const stop = solveInBackground({
    ...pow,
    ...(opts.precomputeWorkers === undefined ? {} : { workers: opts.precomputeWorkers }),
    ...(opts.workerUrl === undefined ? {} : { workerUrl: opts.workerUrl }),
  });
  root.defaultView?.addEventListener("pagehide", stop, { once: true });
}

/** Starts watching the page: call it as the page loads, and `report()` when the form is sent. */
export function watchPage(opts: PageWatchOptions = {}): PageWatch {
  const root = opts.root ?? document;
  const url = opts.tokenUrl ?? "/warden/challenge/page";
  const started = performance.now();
  /** Settled with the token, or undefined while it has not arrived (never awaited past the submit). */
  let token: string | undefined;
  /** The environment, read once the token (and its probe) came or could not be had. */
  let environment: PageEnvironment | undefined;
  void tokenWithRetries(url).then(async (issued) => {
    await bodyReady(root);
    try {
      environment = readEnvironment(issued?.probe, root);
    } catch {
      // a browser that cannot read it sends the form without it
    }
    // The token with its measurements: a form sent in between carries neither.
    token = issued?.token;
    if (issued?.pow && opts.precompute !== false) precompute(issued.pow, opts, root);
  });
  const counts = {
    keys: 0,
    inserted: 0,
    pasted: 0,
    autofilled: 0,
    pointerMoves: 0,
    clicks: 0,
    touches: 0,
    untrusted: 0,
  };
  /** A trusted key press since the last input: the next text input was typed. */
  let keyPending = false;

  const onKey = (e: Event) => {
    if (!e.isTrusted) {
      counts.untrusted++;
      return;
    }
    counts.keys++;
    keyPending = true;
  };
  const onInput = (e: Event) => {
    if (!e.isTrusted) {
      counts.untrusted++;
      return;
    }
    const type = (e as InputEvent).inputType ?? "";
    if (PASTE_TYPES.has(type)) counts.pasted++;
    else if (TYPED_TYPES.has(type) || type.startsWith("delete")) {
      if (!keyPending) counts.inserted++;
    } else counts.autofilled++;
    keyPending = false;
  };
  const onMove = (e: Event) => {
    const p = e as PointerEvent;
    if (p.isTrusted && p.pointerType !== "touch") counts.pointerMoves++;
  };
  const onDown = (e: Event) => {
    const p = e as PointerEvent;
    if (!p.isTrusted) counts.untrusted++;
    else if (p.pointerType === "touch") counts.touches++;
    else counts.clicks++;
  };
  const listeners: [string, (e: Event) => void][] = [
    ["keydown", onKey],
    ["input", onInput],
    ["pointermove", onMove],
    ["pointerdown", onDown],
  ];
  for (const [type, fn] of listeners) root.addEventListener(type, fn, { capture: true, passive: true });

  return {
    async report(): Promise<PageReport> {
      const behaviour = { elapsedMs: Math.round(performance.now() - started), ...counts };
      const report: PageReport = token === undefined ? { behaviour } : { token, behaviour };
      if (environment) report.environment = environment;
      return report;
    },
    stop() {
      for (const [type, fn] of listeners) root.removeEventListener(type, fn, { capture: true });
    },
  };
}
