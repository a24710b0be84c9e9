import { solveProofOfWork } from "./precompute.js";
import { progressText } from "./progressText.js";
import { SolveError, type SolveProgress } from "./solver.js";
import {
  type DeviceAttestationInstructions,
  deviceAttestationProof,
  deviceAttestationSupported,
} from "./webauthn.js";

/** The challenge as the backend route relays it from Warden. */
interface IssuedChallenge {
  challengeId: string;
  method: string;
  instructions: Record<string, unknown>;
  expiresAt: string;
}

/**
 * The widget's own styles, in its shadow root: the page's rules (`button { display: block }`, a
 * reset, a framework's `*` rule) do not reach what is inside, so Verify and Cancel never show
 * together and `hidden` hides. Inherited properties (font, colour) still come from the page, and
 * each part is named (`::part(button)`, `::part(cancel)`, `::part(status)`, `::part(time)`,
 * `::part(progress)`) for a page that wants to restyle it on purpose.
 */
const STYLES = `
:host { display: block; }
:host([hidden]) { display: none; }
[hidden] { display: none !important; }
.box { display: grid; gap: 0.5rem; padding: 0.75rem; border: 1px solid #c9cfdb; border-radius: 0.5rem; }
p { margin: 0; }
progress { width: 100%; }
button { justify-self: start; font: inherit; padding: 0.4rem 0.9rem; cursor: pointer; }
`;

/** One stylesheet for every widget of the page (constructed: no inline style for the page's CSP to allow). */
let sheet: CSSStyleSheet | undefined;
function adoptStyles(root: ShadowRoot): void {
  if (
    "adoptedStyleSheets" in root &&
    typeof CSSStyleSheet === "function" &&
    "replaceSync" in CSSStyleSheet.prototype
  ) {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLES);
    }
    root.adoptedStyleSheets = [sheet];
    return;
  }
  const style = document.createElement("style");
  style.textContent = STYLES;
  root.append(style);
}

/**
 * `<warden-challenge ticket="…">`: runs issue → solve → complete through the integrator's backend
 * routes (`issue-url`, `complete-url`; defaults /warden/challenge/issue and /complete), so the browser
 * never holds an API key. On success it fills the enclosing form's `wardenTicket` and
 * `wardenChallengeId` fields, fires `warden-cleared`, and submits the form when it has `submit`.
 * device_attestation runs the two WebAuthn ceremonies (webauthn.ts) where the browser supports them;
 * other methods fire `warden-method` for the app to handle. While it runs it shows the time elapsed
 * and how long the check usually takes on this device (progressText.ts), and a Cancel button that
 * stops the workers and fires `warden-cancelled`. Status changes are announced in a polite live
 * region (a few per check, never every tick); both buttons work from the keyboard.
 *
 * With `auto` it starts as soon as it is in the page: for a widget shown in answer to what the person
 * just did (the 428 to the form they sent). Without it, it waits for a click on Verify: for a widget
 * the page shows unasked (on load, in a list), where a check that starts by itself would surprise.
 * Its parts live in an open shadow root with their own styles (see STYLES).
 */
export class WardenChallengeElement extends HTMLElement {
  private status!: HTMLParagraphElement;
  private time!: HTMLParagraphElement;
  private progress!: HTMLProgressElement;
  private button!: HTMLButtonElement;
  private cancelButton!: HTMLButtonElement;
  private controller: AbortController | undefined;
  /** When the running check started (performance.now()), for warden-cancelled's elapsedMs. */
  private startedAt = 0;
  /** The proof of work's clock: when it started, the last report, the ticking display. */
  private solving: { started: number; last: SolveProgress | undefined; stage: number } | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;

  connectedCallback(): void {
    if (!this.status) this.render();
    if (this.hasAttribute("auto")) void this.start();
  }

  disconnectedCallback(): void {
    this.stopClock();
    this.controller?.abort();
  }

  private render(): void {
    this.classList.add("warden-challenge");
    // Open, so that the page's tests and assistive technology read it; delegatesFocus, so that
    // element.focus() lands on its button.
    const root = this.shadowRoot ?? this.attachShadow({ mode: "open", delegatesFocus: true });
    adoptStyles(root);
    const box = document.createElement("div");
    box.className = "box";
    box.setAttribute("part", "box");
    this.status = document.createElement("p");
    this.status.className = "warden-challenge__status";
    this.status.setAttribute("part", "status");
    this.status.setAttribute("role", "status");
    this.status.setAttribute("aria-live", "polite");
    this.status.textContent = "A quick check is needed before we continue.";
    // Read on demand, not announced: it changes every second.
    this.time = document.createElement("p");
    this.time.className = "warden-challenge__time";
    this.time.setAttribute("part", "time");
    this.time.hidden = true;
    // Indeterminate while it runs: a random search has no fraction done to show.
    this.progress = document.createElement("progress");
    this.progress.className = "warden-challenge__progress";
    this.progress.setAttribute("part", "progress");
    this.progress.setAttribute("aria-label", "Verification in progress");
    this.progress.hidden = true;
    this.button = document.createElement("button");
    this.button.type = "button";
    this.button.className = "warden-challenge__button";
    this.button.setAttribute("part", "button");
    this.button.textContent = "Verify";
    this.button.addEventListener("click", () => void this.start());
    this.cancelButton = document.createElement("button");
    this.cancelButton.type = "button";
    this.cancelButton.className = "warden-challenge__cancel";
    this.cancelButton.setAttribute("part", "cancel");
    this.cancelButton.textContent = "Cancel";
    this.cancelButton.addEventListener("click", () => this.cancel());
    // Cancel is in the element only while a check runs: at rest it holds one button.
    box.append(this.status, this.time, this.progress, this.button);
    root.append(box);
  }

  private say(text: string): void {
    if (this.status.textContent !== text) this.status.textContent = text;
  }

  private async post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
      ...(this.controller ? { signal: this.controller.signal } : {}),
    });
    let json: Record<string, unknown> = {};
    try {
      json = (await res.json()) as Record<string, unknown>;
    } catch {
      // not JSON: handled by status
    }
    return { status: res.status, json };
  }

  /**
   * Stops the check: the request in flight is aborted and the proof-of-work workers are terminated.
   * Fires `warden-cancelled` (detail: { elapsedMs }) and offers Verify again. Does nothing when idle.
   */
  cancel(): void {
    const controller = this.controller;
    if (!controller || controller.signal.aborted || !this.cancelButton.isConnected) return;
    const elapsedMs = Math.round(performance.now() - this.startedAt);
    controller.abort();
    this.stopClock();
    this.idle("Check cancelled. Select Verify to start it again.", "Verify");
    this.dispatchEvent(new CustomEvent("warden-cancelled", { detail: { elapsedMs }, bubbles: true }));
  }

  /** Issues, solves and completes; on expiry it starts over once with a fresh challenge. */
  async start(attempt = 0): Promise<void> {
    const ticket = this.getAttribute("ticket");
    if (!ticket) return this.fail("no_ticket", "This check cannot start: the page gave it no ticket.");
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.startedAt = performance.now();
    this.button.hidden = true;
    this.button.after(this.cancelButton);
    this.progress.hidden = false;
    this.progress.removeAttribute("value");
    this.say("Checking your browser. This can take a few seconds.");
    const issueUrl = this.getAttribute("issue-url") ?? "/warden/challenge/issue";
    const completeUrl = this.getAttribute("complete-url") ?? "/warden/challenge/complete";
    try {
      const issued = await this.post(issueUrl, { ticket });
      if (controller.signal.aborted) return;
      if (issued.status !== 200) return this.refused(issued);
      const challenge = issued.json as unknown as IssuedChallenge;
      let proof: unknown;
      if (challenge.method === "device_attestation" && deviceAttestationSupported()) {
        this.progress.hidden = true;
        this.say("Confirm with your device: your browser will ask you.");
        proof = await deviceAttestationProof(
          challenge.instructions as unknown as DeviceAttestationInstructions,
          controller.signal,
        );
      } else if (challenge.method === "proof_of_work") {
        proof = { nonce: (await this.solve(challenge, controller.signal)).nonce };
      } else {
        this.idle("One more step is needed; follow the instructions on this page.", undefined);
        this.dispatchEvent(
          new CustomEvent("warden-method", { detail: { challenge, ticket }, bubbles: true }),
        );
        return;
      }
      if (controller.signal.aborted) return;
      const completed = await this.post(completeUrl, { ticket, challengeId: challenge.challengeId, proof });
      if (controller.signal.aborted) return;
      if (completed.status === 410 && attempt === 0) return this.start(1);
      if (completed.status !== 200) return this.refused(completed);
      this.cleared(ticket, challenge.challengeId);
    } catch (err) {
      if (controller.signal.aborted) return;
      if (err instanceof SolveError && err.code === "expired" && attempt === 0) return this.start(1);
      this.fail("failed", "The check could not finish. Try again.");
    }
  }

  /** The proof of work, with the elapsed time ticking every second and the stage announced as it changes. */
  private async solve(challenge: IssuedChallenge, signal: AbortSignal): Promise<{ nonce: string }> {
    const { seed, difficulty } = challenge.instructions as { seed: string; difficulty: number };
    const workerSrc = this.getAttribute("worker-src");
    this.solving = { started: performance.now(), last: undefined, stage: 0 };
    this.time.hidden = false;
    this.showClock();
    this.ticker = setInterval(() => this.showClock(), 1000);
    try {
      return await solveProofOfWork({
        seed,
        difficulty,
        expiresAt: challenge.expiresAt,
        signal,
        ...(workerSrc ? { workerUrl: workerSrc } : {}),
        onProgress: (p) => {
          if (this.solving) this.solving.last = p;
          this.dispatchEvent(new CustomEvent("warden-progress", { detail: p, bubbles: true }));
        },
      });
    } finally {
      this.stopClock();
    }
  }

  private showClock(): void {
    const solving = this.solving;
    if (!solving) return;
    const text = progressText({
      elapsedMs: performance.now() - solving.started,
      hashesPerSecond: solving.last?.hashesPerSecond ?? 0,
      expectedHashes: solving.last?.expectedHashes ?? 0,
    });
    this.time.textContent = `${text.elapsed}. ${text.estimate}`;
    // Forward only (measuring → usual → longer): a rate that wobbles must not repeat announcements.
    const stage = ["measuring", "usual", "longer"].indexOf(text.stage);
    if (stage > solving.stage) {
      solving.stage = stage;
      this.say(text.announcement);
    }
  }

  private stopClock(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    this.solving = undefined;
    if (this.time) this.time.hidden = true;
  }

  /** Not running any more: no progress, no Cancel; `again` labels the button that starts over. */
  private idle(text: string, again: string | undefined): void {
    this.progress.hidden = true;
    this.cancelButton.remove();
    this.say(text);
    if (again === undefined) return;
    this.button.textContent = again;
    this.button.hidden = false;
    this.button.focus();
  }

  private cleared(ticket: string, challengeId: string): void {
    this.progress.max = 1;
    this.progress.value = 1;
    this.cancelButton.remove();
    this.say("Check complete. Thank you.");
    const form = this.closest("form");
    if (form) {
      for (const [name, value] of [
        ["wardenTicket", ticket],
        ["wardenChallengeId", challengeId],
      ] as const) {
        let input = form.querySelector<HTMLInputElement>(`input[name="${name}"]`);
        if (!input) {
          input = document.createElement("input");
          input.type = "hidden";
          input.name = name;
          form.append(input);
        }
        input.value = value;
      }
    }
    this.dispatchEvent(new CustomEvent("warden-cleared", { detail: { ticket, challengeId }, bubbles: true }));
    if (form && this.hasAttribute("submit")) form.requestSubmit();
  }

  private refused(answer: { status: number; json: Record<string, unknown> }): void {
    const code = typeof answer.json.code === "string" ? answer.json.code : `http_${answer.status}`;
    this.fail(
      code,
      answer.status >= 500 || answer.status === 429
        ? "The check is unavailable right now. Try again."
        : "The check was refused. Reload the page and try again.",
    );
  }

  private fail(code: string, text: string): void {
    this.stopClock();
    this.idle(text, "Try again");
    this.dispatchEvent(new CustomEvent("warden-failed", { detail: { code }, bubbles: true }));
  }
}

export function defineWardenChallenge(name = "warden-challenge"): void {
  if (!customElements.get(name)) customElements.define(name, WardenChallengeElement);
}

declare global {
  interface HTMLElementTagNameMap {
    /** Registered by the package's entry (defineWardenChallenge). */
    "warden-challenge": WardenChallengeElement;
  }
}
