import type { AddressInfo } from "node:net";
import { type Browser, chromium, type Page } from "playwright-core";
import { addExtra } from "playwright-extra";
import StealthPlugin from "puppeteer-extra-plugin-stealth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_PATH, launchChromium } from "../../packages/browser/tooling/chromium.mjs";
import { chromiumGrease } from "../../packages/server/src/operations/verify/signals/clientHints.js";
import type { EventRecord } from "../../packages/server/src/store/interfaces.js";
import { chromiumOrSkip } from "../../packages/server/src/testing/chromium.js";
import { bearer, makeTestApp, type TestApp } from "../../packages/server/src/testing/harness.js";
import { createSignupApp } from "./app.mjs";

/**
 * The example signup app in a real headless Chromium (Debian's package): a person signs up; a
 * challenged signup solves in the browser and is created after the re-verify; a deny is refused; a
 * scripted client without a browser cannot complete; the app checks the verdict token before it
 * creates anything; and the whole challenged flow works from the keyboard alone.
 */
const SUITE = "the example signup app in Chromium";
const PERSON_UA =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const SECRET = "example-ticket-secret-for-the-e2e-test-0123";

if (chromiumOrSkip(SUITE)) {
  let warden: TestApp;
  let browser: Browser;
  /**
   * A person's browser, as far as a test can make one: headless Chromium without the automation
   * flag (navigator.webdriver false) and with a normal user agent on its command line. A bot can do the same; headers
   * and page reports cannot tell them apart (docs/security-model.md), the challenge still can cost it.
   */
  let personBrowser: Browser;
  /** puppeteer-extra-plugin-stealth 2.11.2 through playwright-extra 4.3.6, as its users run it. */
  let stealthBrowser: Browser;
  let signupUrl: string;
  let denyingUrl: string;
  let accounts: Map<string, { email: string; eventId: string }>;
  const listeners: { close(): unknown }[] = [];

  async function listen(app: ReturnType<typeof createSignupApp>["app"]): Promise<string> {
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    listeners.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    warden = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "100000" } });
    const wardenUrl = await warden.app.listen({ host: "127.0.0.1", port: 0 });
    await warden.tenant("shop");
    await warden.tenant("strict");
    // The strict tenant denies the network every test browser comes from.
    await warden.store.policies.put(
      "strict",
      JSON.stringify({ deny: { networks: ["127.0.0.0/24"] } }),
      Date.now(),
    );
    const settings = (tenantId: string, apiKey: string) => ({
      wardenUrl,
      apiKey,
      tenantId,
      ticketSecret: SECRET,
      tokenIssuer: warden.deps.config.tokenIssuer,
      tokenAudience: warden.deps.config.tokenAudience,
      verifyTimeoutMs: 5000,
    });
    const shop = createSignupApp(settings("shop", (await warden.key("shop")).apiKey));
    accounts = shop.accounts;
    signupUrl = await listen(shop.app);
    denyingUrl = await listen(createSignupApp(settings("strict", (await warden.key("strict")).apiKey)).app);
    browser = await launchChromium();
    // The user agent from the command line, as a browser build would carry it: the page and its
    // workers read the same one (Playwright's userAgent option leaves the workers' userAgentData empty).
    personBrowser = await launchChromium([
      "--disable-blink-features=AutomationControlled",
      `--user-agent=${PERSON_UA}`,
    ]);
    const stealthChromium = addExtra(chromium);
    stealthChromium.use(StealthPlugin());
    stealthBrowser = await stealthChromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking"],
    });
  }, 60_000);

  afterAll(async () => {
    await stealthBrowser?.close();
    await browser?.close();
    await personBrowser?.close();
    for (const l of listeners) await l.close();
    await warden?.close();
  });

  async function page(userAgent?: string, from: Browser = browser): Promise<Page> {
    const context = await from.newContext(userAgent ? { userAgent } : {});
    return context.newPage();
  }
  /** Opens the form once its script has taken over submission (before that a submit would navigate). */
  async function open(p: Page, url: string): Promise<void> {
    await p.goto(url);
    await p.locator("body[data-ready]").waitFor();
  }
  const outcome = (p: Page) =>
    p.locator("#result[data-state]").getAttribute("data-state", { timeout: 30_000 });

  describe(SUITE, () => {
    it("a person signs up: allowed at once, the account stored with the eventId of its verify", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, signupUrl);
      await p.fill("#email", "ann@example.org");
      await p.fill("#name", "Ann");
      await p.click("#submit");
      expect(await outcome(p)).toBe("created");
      expect(await p.locator("warden-challenge").count()).toBe(0);
      expect(accounts.get("ann@example.org")?.eventId).toMatch(/^evt_/);
      await p.context().close();
    }, 60_000);

    it("a challenged signup solves in the browser and is created after the re-verify, from the signed ticket", async () => {
      // Stock headless Chromium: its user agent says HeadlessChrome, which Warden challenges.
      const p = await page();
      await open(p, signupUrl);
      await p.fill("#email", "bob@example.org");
      await p.fill("#name", "Bob");
      await p.click("#submit");
      await p.evaluate(() => {
        const w = window as unknown as { cleared?: unknown };
        document.addEventListener("warden-cleared", (e) => {
          w.cleared = (e as CustomEvent).detail;
        });
      });
      await p.locator("warden-challenge button").click();
      expect(await outcome(p)).toBe("created");
      expect(await p.evaluate(() => (window as unknown as { cleared?: unknown }).cleared)).toMatchObject({
        challengeId: expect.stringMatching(/^chl_/),
      });
      await expect.poll(() => p.locator("warden-challenge [role=status]").count()).toBe(0);
      const account = accounts.get("bob@example.org");
      expect(account).toMatchObject({ email: "bob@example.org", name: "Bob" });
      await p.screenshot({ path: `${process.env.WARDEN_SCREENSHOTS ?? "/tmp"}/warden-signup-created.png` });
      await p.context().close();
    }, 90_000);

    it("a deny is refused: no challenge offered, no account", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, denyingUrl);
      await p.fill("#email", "eve@example.org");
      await p.click("#submit");
      expect(await outcome(p)).toBe("refused");
      expect(await p.locator("warden-challenge").count()).toBe(0);
      await p.context().close();
    }, 60_000);

    it("a scripted client without a browser cannot complete: a guessed proof is refused, a re-submission without a clear is challenged again", async () => {
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${signupUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", "user-agent": "python-requests/2.32" },
          body: JSON.stringify(body),
        });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };
      const first = await post("/signup", { email: "bot@example.org" });
      expect(first).toMatchObject({ status: 428, json: { code: "warden_challenge" } });
      const ticket = first.json.ticket as string;
      const issued = await post("/warden/challenge/issue", { ticket });
      expect(issued.status).toBe(200);
      const guessed = await post("/warden/challenge/complete", {
        ticket,
        challengeId: issued.json.challengeId,
        proof: { nonce: "0000000000000000" },
      });
      expect(guessed).toMatchObject({ status: 400, json: { code: "invalid_challenge_proof" } });
      const again = await post("/signup", {
        wardenTicket: ticket,
        wardenChallengeId: issued.json.challengeId,
      });
      expect(again).toMatchObject({ status: 428, json: { code: "warden_challenge" } });
      expect(accounts.has("bot@example.org")).toBe(false);
    }, 60_000);

    it("the app checks the verdict token: a receipt from another Warden tenant is refused", async () => {
      // A shop app mistakenly holding another tenant's key: Warden allows, the receipt names the
      // other tenant, and the app refuses to create the account.
      await warden.tenant("other");
      const mismatched = createSignupApp({
        wardenUrl: `http://127.0.0.1:${(warden.app.server.address() as AddressInfo).port}`,
        apiKey: (await warden.key("other")).apiKey,
        tenantId: "shop",
        ticketSecret: SECRET,
        tokenIssuer: warden.deps.config.tokenIssuer,
        tokenAudience: warden.deps.config.tokenAudience,
        verifyTimeoutMs: 5000,
      });
      const url = await listen(mismatched.app);
      const p = await page(undefined, personBrowser);
      await open(p, url);
      await p.fill("#email", "mallory@example.org");
      const answer = p.waitForResponse((r) => r.url().endsWith("/signup"));
      await p.click("#submit");
      expect(await (await answer).json()).toMatchObject({ code: "receipt_invalid" });
      expect(await outcome(p)).toBe("refused");
      expect(mismatched.accounts.size).toBe(0);
      await p.context().close();
    }, 60_000);

    it("headless Chromium with the stock automation flags is never classified human, with or without a spoofed user agent", async () => {
      for (const userAgent of [undefined, PERSON_UA]) {
        const p = await page(userAgent);
        await open(p, signupUrl);
        await p.fill("#email", `headless-${userAgent ? "spoofed" : "stock"}@example.org`);
        const answer = p.waitForResponse((r) => r.url().endsWith("/signup"));
        await p.click("#submit");
        const json = (await (await answer).json()) as { code: string; ticket: string };
        expect(json.code).toBe("warden_challenge");
        const { eventId } = JSON.parse(
          Buffer.from(json.ticket.split(".")[1] as string, "base64url").toString(),
        ) as {
          eventId: string;
        };
        const event = await warden.store.events.get("shop", eventId);
        expect({ userAgent: userAgent ?? "stock", actorType: event?.actorType }).toEqual({
          userAgent: userAgent ?? "stock",
          actorType: "agent_abusive",
        });
        await p.context().close();
      }
    }, 60_000);

    /** Submits the form and reads the event Warden recorded for it, whatever the answer was. */
    async function submitAndRead(p: Page, email: string): Promise<EventRecord | undefined> {
      await open(p, signupUrl);
      await p.fill("#email", email);
      const answer = p.waitForResponse((r) => r.url().endsWith("/signup"));
      await p.click("#submit");
      await answer;
      // The newest event of the tenant: this suite's tests run one after another.
      const res = await warden.app.inject({
        method: "GET",
        url: "/v1/events?limit=1",
        headers: bearer((await warden.key("shop")).apiKey),
      });
      const [latest] = res.json<{ items: { eventId: string }[] }>().items;
      return latest ? warden.store.events.get("shop", latest.eventId) : undefined;
    }

    it("a person's browser: its page and its worker agree, nothing in its client hints is flagged", async () => {
      const p = await page(undefined, personBrowser);
      const event = await submitAndRead(p, "pat@example.org");
      expect(event).toMatchObject({ decision: "allow", actorType: "human" });
      expect(event?.reasons.join(" ")).not.toMatch(/worker|GREASE|Accept-Language comes/);
      await p.context().close();
    }, 60_000);

    it("the same browser with its language set through the DevTools protocol (Playwright's locale option): the header order tells; not allowed, not human", async () => {
      const context = await personBrowser.newContext({ locale: "en-US" });
      const p = await context.newPage();
      const event = await submitAndRead(p, "lou@example.org");
      expect(event?.reasons.join(" ")).toMatch(/Accept-Language comes between User-Agent and Accept/);
      expect(event?.decision).not.toBe("allow");
      expect(event?.actorType).not.toBe("human");
      await context.close();
    }, 60_000);

    it("puppeteer-extra-plugin-stealth as published: its retired GREASE brand and its page/worker disagreement; never allowed, never human", async () => {
      const p = await page(undefined, stealthBrowser);
      const event = await submitAndRead(p, "stealth@example.org");
      expect(event?.actorType).toBe("agent_abusive");
      expect(event?.decision).not.toBe("allow");
      const reasons = event?.reasons.join(" ") ?? "";
      expect(reasons).toMatch(/GREASE brand " Not A;Brand"/);
      expect(reasons).toMatch(/a worker it started read a different .*platform/);
      expect(reasons).toMatch(/Accept-Language comes between User-Agent and Accept/);
      await p.context().close();
    }, 60_000);

    it("the same stealth setup with correct client hints: its page's worker and its header order still tell; not allowed, not human", async () => {
      const p = await page(undefined, stealthBrowser);
      // What a careful operator adds: Chromium 156's real GREASE brand through the DevTools protocol.
      const grease = chromiumGrease(156);
      const cdp = await p.context().newCDPSession(p);
      await cdp.send("Emulation.setUserAgentOverride", {
        userAgent: PERSON_UA,
        userAgentMetadata: {
          brands: [
            { brand: grease.brand, version: grease.version },
            { brand: "Chromium", version: "156" },
          ],
          platform: "Linux",
          platformVersion: "",
          architecture: "x86",
          model: "",
          mobile: false,
        },
      });
      const event = await submitAndRead(p, "careful@example.org");
      const reasons = event?.reasons.join(" ") ?? "";
      expect(reasons).not.toMatch(/GREASE/);
      expect(reasons).toMatch(/a worker it started read a different/);
      expect(reasons).toMatch(/Accept-Language comes between User-Agent and Accept/);
      expect(event?.decision).not.toBe("allow");
      expect(event?.actorType).not.toBe("human");
      await p.context().close();
    }, 60_000);

    it("the challenged flow works with the keyboard alone, and the status is announced", async () => {
      const p = await page();
      await open(p, signupUrl);
      await p.keyboard.press("Tab");
      await p.keyboard.type("kim@example.org");
      await p.keyboard.press("Tab");
      await p.keyboard.type("Kim");
      await p.keyboard.press("Enter");
      const button = p.locator("warden-challenge button");
      await button.waitFor();
      // The page moves focus to the element's button; Enter starts the check.
      await expect.poll(() => button.evaluate((b) => b === document.activeElement)).toBe(true);
      await p.keyboard.press("Enter");
      expect(await outcome(p)).toBe("created");
      expect(accounts.get("kim@example.org")).toMatchObject({ name: "Kim" });
      await p.context().close();
    }, 90_000);
  });
}
