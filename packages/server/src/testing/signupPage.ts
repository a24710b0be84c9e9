import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

/**
 * A signup form as docs/integration.md integrates it, served to a real browser: the page runs
 * `watchPage()` (its token asked with the layout probe and the proof of work, as the SDK's page route
 * asks) and sends the form with `wardenPage`, which the integrator verifies alone, deny reserved for
 * confirmed abuse (every run meets a challenge); on 428 it shows `<warden-challenge auto>`, which issues,
 * solves and completes through the integrator's routes. The integrator's side relays to Warden
 * through `warden` (inject() in a test, HTTP in a bench) and keeps what passed, for the caller to
 * check: the page's proof of work, the challenges issued and the nonces completed. The page marks
 * (performance.now()) the submit and the clear, and how long each key press waited for its main
 * thread (`keyDelays`), and takes `?precompute=off` (watchPage without the
 * background search) and `?tier=` (the riskTier the issue route asks for; default severe, the tier a
 * campaign's surge seals).
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(here, "../../../browser/dist");

const CSP =
  "default-src 'self'; script-src 'self'; worker-src 'self'; connect-src 'self'; style-src 'self'; " +
  "require-trusted-types-for 'script'; trusted-types warden";

const PAGE = `<!doctype html><html lang="en"><title>Sign up</title><main><form id="signup">
<label for="email">Email</label><input id="email" name="email" type="email">
<div id="challenge"></div><button id="submit" type="submit">Sign up</button></form></main>
<script type="module" src="/signup.js"></script>`;

const PAGE_SCRIPT = `
import { watchPage } from "/warden/warden.js";
const params = new URLSearchParams(location.search);
const page = watchPage(params.get("precompute") === "off" ? { precompute: false } : {});
const marks = (window.marks = {});
// How long each key press waited for the page's main thread (a bench reads it).
const keyDelays = (window.keyDelays = []);
document.addEventListener("keydown", (e) => keyDelays.push(performance.now() - e.timeStamp), { capture: true });
const form = document.getElementById("signup");
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  marks.submit = performance.now();
  const res = await fetch("/signup" + location.search, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: form.email.value, wardenPage: await page.report() }),
  });
  const answer = await res.json();
  marks.answer = res.status;
  if (res.status !== 428) return void (marks.reasons = answer.reasons);
  const element = document.createElement("warden-challenge");
  element.setAttribute("ticket", answer.ticket);
  element.setAttribute("auto", "");
  document.getElementById("challenge").replaceChildren(element);
});
document.addEventListener("warden-cleared", () => { marks.cleared = performance.now(); });
document.addEventListener("warden-failed", (e) => { marks.failed = e.detail.code; });
`;

/** Warden's answer to one call, as the relay gets it. */
export interface WardenAnswer {
  status: number;
  body: Record<string, unknown>;
}
export type WardenCall = (url: string, payload: Record<string, unknown>) => Promise<WardenAnswer>;

export interface SignupPage {
  origin: string;
  /** What passed through the integrator's routes, in order. */
  seen: {
    /** The proof of work each page token came with. */
    pows: { seed: string; difficulty: number }[];
    /** The instructions of each challenge issued. */
    issued: { challengeId: string; seed: string; difficulty: number }[];
    /** Each completion: its nonce and Warden's status. */
    completed: { nonce: string; status: number }[];
    /** The session and challenge of each clear, for a re-verify. */
    cleared: { session: string; challengeId: string }[];
  };
  close(): Promise<void>;
}

async function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
}

/**
 * A person filling the form in: moves the pointer to the field in steps and clicks, types the address
 * key by key over about `fillMs`, and moves to the submit button (not pressed: the caller does, with
 * `submit`).
 */
export async function fillInLikeAPerson(page: Page, fillMs: number): Promise<{ submit(): Promise<void> }> {
  const moveTo = async (selector: string) => {
    const box = await page.locator(selector).boundingBox();
    if (!box) throw new Error(`${selector} is not on screen`);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 20 });
  };
  await moveTo("#email");
  await page.mouse.down();
  await page.mouse.up();
  await page.keyboard.type(ADDRESS, { delay: fillMs / ADDRESS.length });
  await moveTo("#submit");
  return {
    async submit() {
      await page.mouse.down();
      await page.mouse.up();
    },
  };
}

const ADDRESS = "ada.lovelace+signup@example.org";

export async function startSignupPage(warden: WardenCall): Promise<SignupPage> {
  const seen: SignupPage["seen"] = { pows: [], issued: [], completed: [], cleared: [] };
  /** What a ticket stands for: the challenged event, its session and the tier to ask for. */
  const tickets = new Map<string, { eventId: string; session: string; tier: string }>();
  let n = 0;

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const send = (status: number, type: string, body: string, headers: http.OutgoingHttpHeaders = {}) => {
      res.writeHead(status, { "content-type": type, ...headers });
      res.end(body);
    };
    const json = (answer: WardenAnswer) =>
      send(answer.status, "application/json", JSON.stringify(answer.body));
    if (req.method === "GET" && url.pathname.startsWith("/warden/")) {
      const file = path.join(DIST, path.basename(url.pathname));
      return send(200, "text/javascript; charset=utf-8", fs.readFileSync(file, "utf8"));
    }
    if (req.method === "GET" && url.pathname === "/signup.js")
      return send(200, "text/javascript; charset=utf-8", PAGE_SCRIPT);
    if (req.method === "GET")
      return send(200, "text/html; charset=utf-8", PAGE, { "content-security-policy": CSP });
    const body = await readBody(req);
    if (url.pathname === "/warden/challenge/page") {
      const answer = await warden("/v1/page-tokens", { probe: true, pow: true });
      const pow = answer.body.pow as { seed: string; difficulty: number } | undefined;
      if (pow) seen.pows.push({ seed: pow.seed, difficulty: pow.difficulty });
      return json(answer);
    }
    if (url.pathname === "/signup") {
      const session = `signup-${++n}-${Date.now()}`;
      // The page's report only (no user agent, no network): thin evidence, challenged; deny reserved
      // for confirmed abuse (decisionCosts), so that the runs' one browser environment surging
      // across this page's attempts (campaign_surge) is challenged too, as a campaign's surge is.
      const verdict = await warden("/v1/verify", {
        action: "signup",
        session,
        subject: { page: body.wardenPage },
        context: { decisionCosts: { falseDeny: 1000 } },
      });
      if (verdict.body.decision !== "challenge")
        return json({ status: verdict.body.decision === "allow" ? 201 : 403, body: verdict.body });
      const ticket = `ticket-${n}`;
      const tier = url.searchParams.get("tier") ?? "severe";
      tickets.set(ticket, { eventId: verdict.body.eventId as string, session, tier });
      return json({ status: 428, body: { code: "warden_challenge", ticket } });
    }
    const held = tickets.get(String(body.ticket));
    if (!held) return json({ status: 400, body: { code: "invalid_ticket" } });
    if (url.pathname === "/warden/challenge/issue") {
      const answer = await warden("/v1/challenge", {
        eventId: held.eventId,
        session: held.session,
        context: { riskTier: held.tier },
      });
      const { seed, difficulty } = (answer.body.instructions ?? {}) as { seed: string; difficulty: number };
      seen.issued.push({ challengeId: answer.body.challengeId as string, seed, difficulty });
      return json(answer);
    }
    if (url.pathname === "/warden/challenge/complete") {
      const proof = body.proof as { nonce?: string };
      const answer = await warden("/v1/challenge", {
        challengeId: body.challengeId,
        session: held.session,
        proof,
      });
      seen.completed.push({ nonce: String(proof?.nonce), status: answer.status });
      if (answer.status === 200)
        seen.cleared.push({ session: held.session, challengeId: String(body.challengeId) });
      return json(answer);
    }
    send(404, "text/plain", "not found");
  }

  const server = http.createServer((req, res) => {
    route(req, res).catch((err: Error) => {
      res.writeHead(500);
      res.end(err.message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return {
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
