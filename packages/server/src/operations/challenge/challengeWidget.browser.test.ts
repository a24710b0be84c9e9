import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../../browser/tooling/chromium.mjs";
import { chromiumOrSkip } from "../../testing/chromium.js";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * <warden-challenge> (@warden/browser's ES module build) in Debian's Chromium, on a page served the
 * strict Content Security Policy docs/integration.md gives, Trusted Types enforced, relaying to a real
 * Warden through the page's own issue and complete routes (as @warden/client's routes do): the widget
 * starts its proof-of-work workers through its `warden` policy and completes a real challenge, which a
 * re-verify then honours; with a CSP that does not name `warden`, it cannot start and says so. On a
 * slow solve (difficulty 8) it shows the seconds elapsed advancing and how long the check usually
 * takes on this device, never a percentage, with few announcements; Cancel terminates its workers and
 * fires warden-cancelled.
 */
const SUITE = "the challenge widget under Trusted Types in Chromium";

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(here, "../../../../browser/dist");

const STRICT_CSP =
  "default-src 'self'; script-src 'self'; worker-src 'self'; connect-src 'self'; style-src 'self'; " +
  "require-trusted-types-for 'script'; trusted-types warden";

/**
 * The page's own script: records the widget's events, every text its live region is given, CSP
 * violations, and whether Trusted Types are enforced at all (an innerHTML string must throw).
 */
const PAGE_SCRIPT = `
import "/warden/warden.js";
const w = window;
w.wardenEvents = [];
w.violations = [];
for (const type of ["warden-cleared", "warden-failed", "warden-cancelled", "warden-method"]) {
  document.addEventListener(type, (e) => w.wardenEvents.push({ type, detail: e.detail }));
}
document.addEventListener("securitypolicyviolation", (e) => w.violations.push(e.violatedDirective + " " + e.blockedURI));
try { document.createElement("div").innerHTML = "<b>x</b>"; w.trustedTypesEnforced = false; }
catch { w.trustedTypesEnforced = true; }
const status = document.querySelector("warden-challenge").shadowRoot.querySelector("[role=status]");
w.announcements = [status.textContent];
new MutationObserver(() => w.announcements.push(status.textContent)).observe(status, { childList: true, characterData: true, subtree: true });
`;

/**
 * What a page's own stylesheet may hold that broke the widget when its parts lived in the page's DOM:
 * every button shown as a block, `hidden` overridden, a catch-all rule, rules aimed at the widget.
 */
const HOSTILE_CSS = `
button { display: block !important; visibility: visible !important; }
[hidden] { display: block !important; }
* { opacity: 1 !important; }
warden-challenge *, .warden-challenge__cancel, .warden-challenge__button { display: block !important; }
`;

interface PageState {
  wardenEvents: { type: string; detail: Record<string, unknown> }[];
  violations: string[];
  trustedTypesEnforced: boolean;
  announcements: string[];
}

if (chromiumOrSkip(SUITE)) {
  let t: TestApp;
  let browser: Browser;
  let server: http.Server;
  let origin: string;
  const keys: Record<string, string> = {};
  /** What a ticket stands for: the tenant's key, the challenged event and its session. */
  const tickets = new Map<string, { apiKey: string; eventId: string; session: string }>();
  let n = 0;

  const post = async (apiKey: string, url: string, payload: Record<string, unknown>) => {
    const res = await t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };

  /** A challenged attempt of `tenant` (bare subject: thin evidence), as a ticket the page carries. */
  async function ticketFor(tenant: string): Promise<string> {
    const session = `s-widget-${++n}`;
    const apiKey = keys[tenant] as string;
    const verdict = await post(apiKey, "/v1/verify", { action: "signup", session, subject: {} });
    expect(verdict.body.decision).toBe("challenge");
    const ticket = `ticket-${n}`;
    tickets.set(ticket, { apiKey, eventId: verdict.body.eventId as string, session });
    return ticket;
  }

  async function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
  }

  /** The integrator's side: the page, the package's files, and the two challenge routes. */
  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const send = (status: number, type: string, body: string, headers: http.OutgoingHttpHeaders = {}) => {
      res.writeHead(status, { "content-type": type, ...headers });
      res.end(body);
    };
    if (url.pathname.startsWith("/warden/") && req.method === "GET") {
      const file = path.join(DIST, path.basename(url.pathname));
      return send(200, "text/javascript; charset=utf-8", fs.readFileSync(file, "utf8"));
    }
    if (url.pathname === "/page.js") return send(200, "text/javascript; charset=utf-8", PAGE_SCRIPT);
    if (url.pathname === "/hostile.css") return send(200, "text/css; charset=utf-8", HOSTILE_CSS);
    if (url.pathname === "/warden/challenge/issue" || url.pathname === "/warden/challenge/complete") {
      const body = await readBody(req);
      const held = tickets.get(String(body.ticket));
      if (!held) return send(400, "application/json", JSON.stringify({ code: "unknown_ticket" }));
      const answer = url.pathname.endsWith("/issue")
        ? await post(held.apiKey, "/v1/challenge", { eventId: held.eventId, session: held.session })
        : await post(held.apiKey, "/v1/challenge", {
            challengeId: body.challengeId,
            session: held.session,
            proof: body.proof,
          });
      return send(answer.status, "application/json", JSON.stringify(answer.body));
    }
    const ticket = url.searchParams.get("ticket") ?? "";
    send(
      200,
      "text/html; charset=utf-8",
      `<!doctype html><html lang="en"><title>Sign up</title>${url.searchParams.has("hostile") ? '<link rel="stylesheet" href="/hostile.css">' : ""}<main><form><button id="own" type="button" hidden>The page's own</button><warden-challenge ticket="${ticket}"${url.searchParams.has("manual") ? "" : " auto"}></warden-challenge></form></main><script type="module" src="/page.js"></script>`,
      { "content-security-policy": url.searchParams.get("csp") ?? STRICT_CSP },
    );
  }

  beforeAll(async () => {
    t = await makeTestApp();
    await t.tenant("shop");
    await t.tenant("slow");
    await t.store.policies.put(
      "slow",
      JSON.stringify({ challenge: { powDifficulty: { default: 8, elevated: 8, severe: 8 } } }),
      Date.now(),
    );
    keys.shop = (await t.key("shop")).apiKey;
    keys.slow = (await t.key("slow")).apiKey;
    server = http.createServer((req, res) => {
      route(req, res).catch((err: Error) => {
        res.writeHead(500);
        res.end(err.message);
      });
    });
    await new Promise<void>((r) => server.listen(0, "localhost", r));
    origin = `http://localhost:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    server?.close();
    await t?.close();
  });

  const state = (page: Page) =>
    page.evaluate((): PageState => {
      const w = globalThis as unknown as PageState;
      return {
        wardenEvents: w.wardenEvents,
        violations: w.violations,
        trustedTypesEnforced: w.trustedTypesEnforced,
        announcements: w.announcements,
      };
    });
  const events = async (page: Page, type: string) =>
    (await state(page)).wardenEvents.filter((e) => e.type === type);

  async function openWidget(ticket: string, csp = STRICT_CSP, extra = ""): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/?ticket=${ticket}&csp=${encodeURIComponent(csp)}${extra}`);
    await page.locator("warden-challenge [role=status]").waitFor();
    await expect.poll(async () => (await state(page)).trustedTypesEnforced).toBe(true);
    return page;
  }

  describe(SUITE, () => {
    it("under require-trusted-types-for 'script' and trusted-types warden, completes a real proof of work that a re-verify honours", async () => {
      const ticket = await ticketFor("shop");
      const page = await openWidget(ticket);
      try {
        await expect.poll(() => events(page, "warden-cleared"), { timeout: 20_000 }).toHaveLength(1);
        const s = await state(page);
        expect(s.wardenEvents.map((e) => e.type)).toEqual(["warden-cleared"]);
        // The only violation is the page's own innerHTML probe: none from the widget or its workers.
        expect(s.violations).toEqual(["require-trusted-types-for trusted-types-sink"]);
        const challengeId = await page.locator("input[name=wardenChallengeId]").inputValue();
        expect(challengeId).toMatch(/^chl_/);
        expect(await page.locator("warden-challenge [role=status]").textContent()).toBe(
          "Check complete. Thank you.",
        );
        const held = tickets.get(ticket) as { apiKey: string; session: string };
        const again = await post(held.apiKey, "/v1/verify", {
          action: "signup",
          session: held.session,
          subject: {},
          context: { challengeId },
        });
        expect(again.body).toMatchObject({ decision: "allow", challengeCleared: true });
      } finally {
        await page.close();
      }
    }, 40_000);

    it("with a CSP whose trusted-types does not name warden, cannot start its workers and fires warden-failed", async () => {
      const page = await openWidget(
        await ticketFor("shop"),
        STRICT_CSP.replace("trusted-types warden", "trusted-types other"),
      );
      try {
        await expect.poll(() => events(page, "warden-failed"), { timeout: 20_000 }).toHaveLength(1);
        // The page's probe, the policy the CSP does not allow, then the worker URL it refused.
        expect((await state(page)).violations).toEqual([
          "require-trusted-types-for trusted-types-sink",
          "trusted-types trusted-types-policy",
          "require-trusted-types-for trusted-types-sink",
        ]);
        expect(await page.locator("warden-challenge button", { hasText: "Try again" }).isVisible()).toBe(
          true,
        );
      } finally {
        await page.close();
      }
    }, 40_000);

    it("under a hostile page stylesheet (every button a block, [hidden] shown): one button at a time, Verify at rest, Cancel while solving, Verify after Cancel; no CSP exception for its styles", async () => {
      const page = await openWidget(await ticketFor("slow"), STRICT_CSP, "&hostile&manual");
      try {
        // The sheet is in force on the page's own elements: its hidden button shows.
        expect(await page.locator("#own").isVisible()).toBe(true);
        const shown = () =>
          page
            .locator("warden-challenge button")
            .evaluateAll((buttons) => buttons.filter((b) => b.checkVisibility()).map((b) => b.textContent));
        expect(await shown()).toEqual(["Verify"]);
        await page.getByRole("button", { name: "Verify" }).click();
        await expect.poll(shown).toEqual(["Cancel"]);
        await expect.poll(() => page.locator("warden-challenge progress").isVisible()).toBe(true);
        await page.getByRole("button", { name: "Cancel" }).click();
        await expect.poll(shown).toEqual(["Verify"]);
        expect(await page.locator("warden-challenge progress").isVisible()).toBe(false);
        // The page's probe only: the widget's constructed stylesheet needs no style-src exception.
        expect((await state(page)).violations).toEqual(["require-trusted-types-for trusted-types-sink"]);
      } finally {
        await page.close();
      }
    }, 60_000);

    it("a slow solve shows seconds elapsed advancing and the usual time on this device, never a percentage; Cancel terminates the workers and fires warden-cancelled", async () => {
      const page = await openWidget(await ticketFor("slow"));
      try {
        const time = page.locator("warden-challenge .warden-challenge__time");
        const elapsed = async () => Number(/^(\d+) s elapsed/.exec((await time.textContent()) ?? "")?.[1]);
        await expect
          .poll(() => time.textContent(), { timeout: 15_000 })
          .toMatch(/Usually about \d+ (s|min) on this device/);
        const first = await elapsed();
        await expect.poll(elapsed, { timeout: 30_000 }).toBeGreaterThanOrEqual(first + 2);
        expect(
          await page.locator("warden-challenge").evaluate((w) => w.shadowRoot?.textContent ?? ""),
        ).not.toMatch(/%|likely done/);
        expect(await page.locator("warden-challenge progress").getAttribute("value")).toBeNull();
        // Polite, and told twice: the start, then the estimate; not every tick.
        expect(await page.locator("warden-challenge [role=status]").getAttribute("aria-live")).toBe("polite");
        const { announcements } = await state(page);
        expect(announcements).toEqual([
          "Checking your browser. This can take a few seconds.",
          expect.stringMatching(/^Checking your browser: usually about \d+ (s|min) on this device\.$/),
        ]);
        const solvers = page.workers().length;
        expect(solvers).toBeGreaterThanOrEqual(1);

        await page.getByRole("button", { name: "Cancel" }).click();
        await expect.poll(() => page.workers().length, { timeout: 10_000 }).toBe(0);
        const cancelled = await events(page, "warden-cancelled");
        expect(cancelled).toHaveLength(1);
        expect(cancelled[0]?.detail.elapsedMs).toBeGreaterThanOrEqual(2000);
        expect((await state(page)).wardenEvents.map((e) => e.type)).toEqual(["warden-cancelled"]);
        expect(await page.locator("warden-challenge [role=status]").textContent()).toMatch(/cancelled/);
        await expect
          .poll(() => page.locator("warden-challenge .warden-challenge__time").isVisible())
          .toBe(false);
        expect(await page.getByRole("button", { name: "Verify" }).isVisible()).toBe(true);
      } finally {
        await page.close();
      }
    }, 60_000);
  });
}
