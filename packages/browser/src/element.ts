import { SolveError, solveProofOfWork } from "./solver.js";
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
 * `<warden-challenge ticket="…">`: runs issue → solve → complete through the integrator's backend
 * routes (`issue-url`, `complete-url`; defaults /warden/challenge/issue and /complete), so the browser
 * never holds an API key. On success it fills the enclosing form's `wardenTicket` and
 * `wardenChallengeId` fields, fires `warden-cleared`, and submits the form when it has `submit`.
 * device_attestation runs the two WebAuthn ceremonies (webauthn.ts) where the browser supports them;
 * other methods fire `warden-method` for the app to handle. Status is announced
 * in a polite live region; the one button (start, retry) works from the keyboard.
 */
export class WardenChallengeElement extends HTMLElement {
  private status!: HTMLParagraphElement;
  private progress!: HTMLProgressElement;
  private button!: HTMLButtonElement;
  private controller: AbortController | undefined;
  private lastAnnounced = -1;

  connectedCallback(): void {
    if (!this.status) this.render();
    if (this.hasAttribute("auto")) void this.start();
  }

  disconnectedCallback(): void {
    this.controller?.abort();
  }

  private render(): void {
    this.classList.add("warden-challenge");
    this.status = document.createElement("p");
    this.status.className = "warden-challenge__status";
    this.status.setAttribute("role", "status");
    this.status.setAttribute("aria-live", "polite");
    this.status.textContent = "A quick check is needed before we continue.";
    this.progress = document.createElement("progress");
    this.progress.className = "warden-challenge__progress";
    this.progress.max = 100;
    this.progress.value = 0;
    this.progress.setAttribute("aria-label", "Verification progress");
    this.progress.hidden = true;
    this.button = document.createElement("button");
    this.button.type = "button";
    this.button.className = "warden-challenge__button";
    this.button.textContent = "Verify";
    this.button.addEventListener("click", () => void this.start());
    this.append(this.status, this.progress, this.button);
  }

  private say(text: string): void {
    this.status.textContent = text;
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

  /** Issues, solves and completes; on expiry it starts over once with a fresh challenge. */
  async start(attempt = 0): Promise<void> {
    const ticket = this.getAttribute("ticket");
    if (!ticket) return this.fail("no_ticket", "This check cannot start: the page gave it no ticket.");
    this.controller?.abort();
    this.controller = new AbortController();
    this.button.hidden = true;
    this.progress.hidden = false;
    this.progress.value = 0;
    this.lastAnnounced = -1;
    this.say("Checking your browser. This can take a few seconds.");
    try {
      const issued = await this.post(this.getAttribute("issue-url") ?? "/warden/challenge/issue", { ticket });
      if (issued.status !== 200) return this.refused(issued);
      const challenge = issued.json as unknown as IssuedChallenge;
      if (challenge.method === "device_attestation" && deviceAttestationSupported()) {
        this.progress.hidden = true;
        this.say("Confirm with your device: your browser will ask you.");
        const proof = await deviceAttestationProof(
          challenge.instructions as unknown as DeviceAttestationInstructions,
          this.controller.signal,
        );
        const completed = await this.post(this.getAttribute("complete-url") ?? "/warden/challenge/complete", {
          ticket,
          challengeId: challenge.challengeId,
          proof,
        });
        if (completed.status === 410 && attempt === 0) return this.start(1);
        if (completed.status !== 200) return this.refused(completed);
        return this.cleared(ticket, challenge.challengeId);
      }
      if (challenge.method !== "proof_of_work") {
        this.progress.hidden = true;
        this.say("One more step is needed; follow the instructions on this page.");
        this.dispatchEvent(
          new CustomEvent("warden-method", { detail: { challenge, ticket }, bubbles: true }),
        );
        return;
      }
      const { seed, difficulty } = challenge.instructions as { seed: string; difficulty: number };
      const workerSrc = this.getAttribute("worker-src");
      const solution = await solveProofOfWork({
        seed,
        difficulty,
        expiresAt: challenge.expiresAt,
        signal: this.controller.signal,
        ...(workerSrc ? { workerUrl: workerSrc } : {}),
        onProgress: (p) => {
          const percent = Math.min(99, Math.floor(p.fraction * 100));
          this.progress.value = percent;
          this.dispatchEvent(new CustomEvent("warden-progress", { detail: p, bubbles: true }));
          // Announce in quarters, not every tick: a screen reader must not be flooded.
          const quarter = Math.floor(percent / 25);
          if (quarter > this.lastAnnounced && quarter > 0) {
            this.lastAnnounced = quarter;
            this.say(`Checking your browser: ${quarter * 25}% likely done.`);
          }
        },
      });
      const completed = await this.post(this.getAttribute("complete-url") ?? "/warden/challenge/complete", {
        ticket,
        challengeId: challenge.challengeId,
        proof: { nonce: solution.nonce },
      });
      if (completed.status === 410 && attempt === 0) return this.start(1);
      if (completed.status !== 200) return this.refused(completed);
      this.cleared(ticket, challenge.challengeId);
    } catch (err) {
      if (err instanceof SolveError && err.code === "expired" && attempt === 0) return this.start(1);
      if (err instanceof SolveError && err.code === "aborted") return;
      this.fail("failed", "The check could not finish. Try again.");
    }
  }

  private cleared(ticket: string, challengeId: string): void {
    this.progress.value = 100;
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
    this.progress.hidden = true;
    this.say(text);
    this.button.textContent = "Try again";
    this.button.hidden = false;
    this.button.focus();
    this.dispatchEvent(new CustomEvent("warden-failed", { detail: { code }, bubbles: true }));
  }
}

export function defineWardenChallenge(name = "warden-challenge"): void {
  if (!customElements.get(name)) customElements.define(name, WardenChallengeElement);
}
