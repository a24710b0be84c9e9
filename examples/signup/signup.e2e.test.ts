import type { AddressInfo } from "node:net";
import { type Browser, chromium, type Page } from "playwright-core";
import { addExtra } from "playwright-extra";
import StealthPlugin from "puppeteer-extra-plugin-stealth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_PATH, launchChromium } from "../../packages/browser/tooling/chromium.mjs";
import type { EventRecord } from "../../packages/server/src/domain.js";
import { chromiumGrease } from "../../packages/server/src/operations/verify/signals/clientHints.js";
import { chromiumOrSkip } from "../../packages/server/src/testing/chromium.js";
import { bearer, makeTestApp, type TestApp } from "../../packages/server/src/testing/harness.js";
import { createSignupApp } from "./app.mjs";

/**
 * The example signup app in a real headless Chromium (Debian's package). The page watches how its
 * form is filled in (@warden/browser's watchPage) and sends a page token with the counts, so the
 * "person" here is a person-paced browser: it moves the mouse to each field in many steps, clicks,
 * types key by key and sends the form seconds after the page loaded. A headless browser is not a
 * person, and nothing here claims Warden can tell a bot that paces itself like this from one: these
 * tests show what the page evidence adds (a browser filled in at machine speed is denied, a form
 * sent without its page is denied where the tenant requires the page) and that it takes nothing
 * away (person-paced input is allowed, and a challenged person solves in the browser, also from the
 * keyboard alone). The stealth and header tests pace their input like a person too, so what still
 * catches them is their headers and workers, not how fast they typed.
 */
const SUITE = "the example signup app in Chromium";
const PERSON_UA =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const SECRET = "example-ticket-secret-for-the-e2e-test-0123";
/** Where every browser of this suite comes from, as Warden reads it (the gate truncates the address). */
const LOOPBACK = "127.0.0.0/24";
/** Sign-ups from the loopback network that the "busy" tenant saw before the tests' own. */
const EARLIER_SIGNUPS = 8;
/** The least time the person-paced browser takes from page load to submit (Warden's floor is 1.5 s). */
const PERSON_FILL_MS = 2_000;

const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1));

/** When each page's token arrived (open()), for actLikeAPerson's time from load to submit. */
const loadedAt = new WeakMap<Page, number>();

/** Moves the mouse to a point inside the element in many small steps, as a hand does. */
async function moveTo(p: Page, selector: string): Promise<void> {
  const box = await p.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not on screen`);
  const x = box.x + box.width * (0.25 + Math.random() * 0.5);
  const y = box.y + box.height * (0.3 + Math.random() * 0.4);
  await p.mouse.move(x, y, { steps: between(15, 25) });
}

/** Moves to the element and presses the button, with a person's short pause between down and up. */
async function clickLikeAPerson(p: Page, selector: string): Promise<void> {
  await moveTo(p, selector);
  await p.waitForTimeout(between(80, 200));
  await p.mouse.down();
  await p.waitForTimeout(between(50, 120));
  await p.mouse.up();
}

/** Lets at least PERSON_FILL_MS pass since the page's token arrived. */
async function takeAPersonsTime(p: Page): Promise<void> {
  const since = loadedAt.get(p) ?? Date.now();
  const left = since + PERSON_FILL_MS + between(0, 400) - Date.now();
  if (left > 0) await p.waitForTimeout(left);
}

/**
 * The form filled in at a person's pace, as far as a headless browser can: the mouse moves to each
 * field in 15-25 steps and clicks it, the text is typed key by key (60-120 ms apart), and the mouse
 * moves to the submit button and clicks it at least PERSON_FILL_MS after the page loaded. With
 * `submit: false` it stops before the submit.
 */
async function actLikeAPerson(
  p: Page,
  form: { email: string; name?: string },
  { submit = true }: { submit?: boolean } = {},
): Promise<void> {
  await clickLikeAPerson(p, "#email");
  await p.keyboard.type(form.email, { delay: between(60, 120) });
  if (form.name !== undefined) {
    await clickLikeAPerson(p, "#name");
    await p.keyboard.type(form.name, { delay: between(60, 120) });
  }
  if (!submit) return;
  await takeAPersonsTime(p);
  await clickLikeAPerson(p, "#submit");
}

/** The ids of the findings Warden weighed for an event. */
const findingsOf = (event: EventRecord | undefined): string[] =>
  ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
/** What Warden's page evidence (the page token and the page's behaviour report) found. */
const PAGE_EVIDENCE = new Set([
  "page_evidence_missing",
  "page_token_invalid",
  "page_token_expired",
  "page_submitted_fast",
  "page_other_user_agent",
  "page_other_network",
  "page_input_without_keys",
  "page_pointer_teleported",
  "page_synthetic_events",
]);
const pageFindings = (event: EventRecord | undefined) =>
  findingsOf(event).filter((id) => PAGE_EVIDENCE.has(id));

/** The eventId a gate's signed challenge ticket carries. */
const eventIdOfTicket = (ticket: string): string =>
  (
    JSON.parse(Buffer.from(ticket.split(".")[1] as string, "base64url").toString()) as {
      eventId: string;
    }
  ).eventId;

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
  /** A tenant whose policy limits sign-ups per network, and whose network is over it (challenged). */
  let busyUrl: string;
  /** A tenant whose policy requires page evidence (`requirePage`). */
  let pagesUrl: string;
  let accounts: Map<string, { email: string; eventId: string }>;
  let busyAccounts: Map<string, { email: string; eventId: string }>;
  let pagesAccounts: Map<string, { email: string; eventId: string }>;
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
    for (const tenant of ["shop", "strict", "busy", "pages"]) await warden.tenant(tenant);
    // Every browser of this suite runs on one machine: one environment and one shape, dozens of
    // sign-ups in minutes, which Warden counts as a campaign (signals/campaign.ts). This suite is
    // about each attempt's own evidence, so its tenants raise the campaign floor out of reach, as a
    // tenant whose people share one managed device image would.
    const oneMachine = { campaign: { floor: 100_000 } };
    await warden.store.policies.put("shop", JSON.stringify(oneMachine), Date.now());
    // The strict tenant denies the network every test browser comes from.
    await warden.store.policies.put(
      "strict",
      JSON.stringify({ ...oneMachine, deny: { networks: [LOOPBACK] } }),
      Date.now(),
    );
    // The busy tenant takes one sign-up per network an hour; the loopback network has made many (an
    // office or a campus behind one address): a person from it is challenged, for no automation.
    await warden.store.policies.put(
      "busy",
      JSON.stringify({ ...oneMachine, velocity: { ip_network: { perHour: 1 } } }),
      Date.now(),
    );
    // The pages tenant refuses an attempt whose form's page never ran.
    await warden.store.policies.put(
      "pages",
      JSON.stringify({ ...oneMachine, requirePage: true }),
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
    const busyKey = (await warden.key("busy")).apiKey;
    for (let i = 0; i < EARLIER_SIGNUPS; i++) {
      const res = await warden.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(busyKey),
        payload: { action: "signup", session: `earlier-${i}`, subject: { ipTrunc: LOOPBACK } },
      });
      expect(res.statusCode).toBe(200);
    }
    const busy = createSignupApp(settings("busy", busyKey));
    busyAccounts = busy.accounts;
    busyUrl = await listen(busy.app);
    const pages = createSignupApp(settings("pages", (await warden.key("pages")).apiKey));
    pagesAccounts = pages.accounts;
    pagesUrl = await listen(pages.app);
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
  /**
   * Opens the form once its script has taken over submission (before that a submit would navigate)
   * and its page token has arrived (the token's issue time is when Warden counts the page as loaded).
   */
  async function open(p: Page, url: string): Promise<void> {
    const token = p.waitForResponse((r) => r.url().endsWith("/warden/challenge/page"));
    await p.goto(url);
    await p.locator("body[data-ready]").waitFor();
    expect((await token).status()).toBe(200);
    loadedAt.set(p, Date.now());
  }
  const outcome = (p: Page) =>
    p.locator("#result[data-state]").getAttribute("data-state", { timeout: 30_000 });
  /** The newest event of a tenant: this suite's tests run one after another. */
  async function latestEvent(tenantId: string): Promise<EventRecord | undefined> {
    const [latest] = await warden.store.insights.listEvents(tenantId, { since: 0, until: Date.now() + 1 }, 1);
    // The list's rows are summaries: the event itself, whole.
    return latest ? warden.store.events.get(tenantId, latest.id) : undefined;
  }
  /** Sends the form and returns Warden's event for that request (whatever the answer was). */
  async function submitAndRead(
    p: Page,
    tenantId: string,
    submit: () => Promise<void>,
  ): Promise<{ event: EventRecord | undefined; answer: { status: number; json: Record<string, unknown> } }> {
    const response = p.waitForResponse((r) => r.url().endsWith("/signup"));
    await submit();
    const res = await response;
    const json = (await res.json()) as Record<string, unknown>;
    const event =
      typeof json.ticket === "string"
        ? await warden.store.events.get(tenantId, eventIdOfTicket(json.ticket))
        : typeof json.eventId === "string"
          ? await warden.store.events.get(tenantId, json.eventId)
          : await latestEvent(tenantId);
    return { event, answer: { status: res.status(), json } };
  }

  describe(SUITE, () => {
    it("a person-paced browser signs up: allowed at once, no page evidence against it, the account stored with the eventId of its verify", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, signupUrl);
      const { event } = await submitAndRead(p, "shop", () =>
        actLikeAPerson(p, { email: "ann@example.org", name: "Ann" }),
      );
      expect(await outcome(p)).toBe("created");
      expect(await p.locator("warden-challenge").count()).toBe(0);
      expect(event).toMatchObject({ decision: "allow", actorType: "human" });
      expect(pageFindings(event)).toEqual([]);
      expect(accounts.get("ann@example.org")?.eventId).toBe(event?.id);
      await p.context().close();
    }, 60_000);

    it("the page report a person-paced browser sends: a page token, key presses, more pointer moves than clicks, nothing inserted or scripted", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, signupUrl);
      const sent = p.waitForRequest((r) => r.url().endsWith("/signup") && r.method() === "POST");
      const { event } = await submitAndRead(p, "shop", () =>
        actLikeAPerson(p, { email: "ria@example.org", name: "Ria" }),
      );
      const report = (await sent).postDataJSON().wardenPage as {
        token?: string;
        behaviour: Record<string, number>;
      };
      expect(report.token).toMatch(/^wpt1\./);
      const b = report.behaviour;
      // A keydown for every character typed, and the input each one caused counted as typed.
      expect(b.keys).toBeGreaterThanOrEqual("ria@example.orgRia".length);
      expect(b).toMatchObject({ inserted: 0, pasted: 0, autofilled: 0, touches: 0, untrusted: 0 });
      expect(b.clicks).toBe(3);
      expect(b.pointerMoves).toBeGreaterThan(b.clicks as number);
      expect(b.pointerMoves).toBeGreaterThanOrEqual(3 * 15);
      expect(b.elapsedMs).toBeGreaterThanOrEqual(PERSON_FILL_MS);
      // Warden read the token it issued and measured the time itself.
      const { ageMs } = (event?.signals.page ?? {}) as { ageMs?: number };
      expect(ageMs).toBeGreaterThanOrEqual(PERSON_FILL_MS);
      expect(pageFindings(event)).toEqual([]);
      expect(event).toMatchObject({ decision: "allow", actorType: "human" });
      await p.context().close();
    }, 60_000);

    it("the same browser filled in at machine speed (Playwright's fill() and an instant click): denied as automation by its page evidence, no account", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, signupUrl);
      const { event, answer } = await submitAndRead(p, "shop", async () => {
        await p.fill("#email", "quick@example.org");
        await p.fill("#name", "Quick");
        await p.click("#submit");
      });
      expect(answer).toMatchObject({ status: 403, json: { code: "warden_denied" } });
      expect(await outcome(p)).toBe("refused");
      expect(await p.locator("warden-challenge").count()).toBe(0);
      expect(event).toMatchObject({ decision: "deny", actorType: "agent_abusive" });
      expect(findingsOf(event)).toEqual(
        expect.arrayContaining(["page_submitted_fast", "page_input_without_keys", "page_pointer_teleported"]),
      );
      // Nothing else gave it away: its headers and page agree, as a person's browser's do.
      expect(event?.reasons.join(" ")).not.toMatch(
        /worker|GREASE|Accept-Language comes|navigator\.webdriver/,
      );
      expect(accounts.has("quick@example.org")).toBe(false);
      await p.context().close();
    }, 60_000);

    it("a challenged signup (a person-paced browser from a network over the tenant's velocity limit) solves in the browser and is created after the re-verify, from the signed ticket", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, busyUrl);
      const { event, answer } = await submitAndRead(p, "busy", () =>
        actLikeAPerson(p, { email: "bob@example.org", name: "Bob" }),
      );
      expect(answer).toMatchObject({ status: 428, json: { code: "warden_challenge" } });
      // Challenged for the network's sign-ups, not for automation: no page evidence against it.
      expect(event?.decision).toBe("challenge");
      expect(event?.actorType).not.toBe("agent_abusive");
      expect(findingsOf(event)).toContain("velocity_ip_network");
      expect(pageFindings(event)).toEqual([]);
      await p.evaluate(() => {
        const w = window as unknown as { cleared?: unknown };
        document.addEventListener("warden-cleared", (e) => {
          w.cleared = (e as CustomEvent).detail;
        });
      });
      await p.locator("warden-challenge button").waitFor();
      await clickLikeAPerson(p, "warden-challenge button");
      expect(await outcome(p)).toBe("created");
      expect(await p.evaluate(() => (window as unknown as { cleared?: unknown }).cleared)).toMatchObject({
        challengeId: expect.stringMatching(/^chl_/),
      });
      await expect.poll(() => p.locator("warden-challenge [role=status]").count()).toBe(0);
      const account = busyAccounts.get("bob@example.org");
      expect(account).toMatchObject({ email: "bob@example.org", name: "Bob" });
      // A person's challenge: the default difficulty, not the severe one automation gets.
      const [challenge] = await warden.store.insights.challengesForEvent("busy", event?.id as string);
      expect(challenge).toMatchObject({ difficulty: 4 });
      await p.screenshot({ path: `${process.env.WARDEN_SCREENSHOTS ?? "/tmp"}/warden-signup-created.png` });
      await p.context().close();
    }, 90_000);

    it("a deny is refused: a person-paced browser on a network the tenant denies gets no challenge, no account", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, denyingUrl);
      const { event } = await submitAndRead(p, "strict", () =>
        actLikeAPerson(p, { email: "eve@example.org" }),
      );
      expect(await outcome(p)).toBe("refused");
      expect(await p.locator("warden-challenge").count()).toBe(0);
      expect(event?.decision).toBe("deny");
      expect(event?.reasons[0]).toMatch(/deny list names network/);
      expect(pageFindings(event)).toEqual([]);
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

    it("a tenant that requires the page (requirePage): a person-paced browser is allowed with its token; the same form POSTed by a script without a page token is denied (page_evidence_missing), no account", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, pagesUrl);
      const { event } = await submitAndRead(p, "pages", () =>
        actLikeAPerson(p, { email: "una@example.org", name: "Una" }),
      );
      expect(await outcome(p)).toBe("created");
      expect(event).toMatchObject({ decision: "allow", actorType: "human" });
      expect(event?.signals.page).toMatchObject({ ageMs: expect.any(Number) });
      expect(pageFindings(event)).toEqual([]);
      expect(pagesAccounts.get("una@example.org")?.eventId).toBe(event?.id);
      await p.context().close();

      // The same form, sent by a program with the person's user agent: its page never ran.
      const res = await fetch(`${pagesUrl}/signup`, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": PERSON_UA },
        body: JSON.stringify({ email: "una2@example.org", name: "Una" }),
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: "warden_denied" });
      const scripted = await latestEvent("pages");
      expect(scripted).toMatchObject({
        decision: "deny",
        actorType: "agent_abusive",
        signals: { page: "absent" },
      });
      expect(findingsOf(scripted)).toContain("page_evidence_missing");
      expect(pagesAccounts.has("una2@example.org")).toBe(false);
    }, 60_000);

    it("the gate checks the verdict token: a receipt from another Warden tenant is refused", async () => {
      // A shop app mistakenly holding another tenant's key: Warden allows the person-paced browser,
      // the receipt names the other tenant, and the app refuses to create the account.
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
      const { event, answer } = await submitAndRead(p, "other", () =>
        actLikeAPerson(p, { email: "mallory@example.org" }),
      );
      expect(answer.json).toMatchObject({ code: "receipt_invalid" });
      expect(event).toMatchObject({ decision: "allow" });
      expect(pageFindings(event)).toEqual([]);
      expect(await outcome(p)).toBe("refused");
      expect(mismatched.accounts.size).toBe(0);
      await p.context().close();
    }, 60_000);

    it("headless Chromium with the stock automation flags is never classified human, even when it paces its input like a person, with or without a spoofed user agent: challenged as automation, at the severe difficulty", async () => {
      for (const userAgent of [undefined, PERSON_UA]) {
        const p = await page(userAgent);
        await open(p, signupUrl);
        const email = `headless-${userAgent ? "spoofed" : "stock"}@example.org`;
        const { event, answer } = await submitAndRead(p, "shop", () => actLikeAPerson(p, { email }));
        expect({
          userAgent: userAgent ?? "stock",
          code: answer.json.code,
          actorType: event?.actorType,
        }).toEqual({
          userAgent: userAgent ?? "stock",
          code: "warden_challenge",
          actorType: "agent_abusive",
        });
        // Its flags gave it away (its user agent, or navigator.webdriver behind the spoofed one), not
        // its pace; the challenge an agent_abusive event gets is sealed at the severe tier.
        expect(findingsOf(event)).toContain(userAgent ? "page_webdriver" : "ua_automation");
        expect(pageFindings(event)).toEqual([]);
        const issued = await fetch(`${signupUrl}/warden/challenge/issue`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ ticket: answer.json.ticket }),
        });
        expect(issued.status).toBe(200);
        expect(await issued.json()).toMatchObject({ instructions: { type: "pow", difficulty: 6 } });
        expect(accounts.has(email)).toBe(false);
        await p.context().close();
      }
    }, 60_000);

    it("a person-paced browser: its page and its worker agree, nothing in its client hints is flagged", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, signupUrl);
      const { event } = await submitAndRead(p, "shop", () => actLikeAPerson(p, { email: "pat@example.org" }));
      expect(event).toMatchObject({ decision: "allow", actorType: "human" });
      expect(event?.reasons.join(" ")).not.toMatch(/worker|GREASE|Accept-Language comes/);
      await p.context().close();
    }, 60_000);

    it("the same browser with its language set through the DevTools protocol (Playwright's locale option), paced like a person: the header order tells; not allowed, not human", async () => {
      const context = await personBrowser.newContext({ locale: "en-US" });
      const p = await context.newPage();
      await open(p, signupUrl);
      const { event } = await submitAndRead(p, "shop", () => actLikeAPerson(p, { email: "lou@example.org" }));
      expect(event?.reasons.join(" ")).toMatch(/Accept-Language comes between User-Agent and Accept/);
      expect(event?.decision).not.toBe("allow");
      expect(event?.actorType).not.toBe("human");
      expect(pageFindings(event)).toEqual([]);
      await context.close();
    }, 60_000);

    it("puppeteer-extra-plugin-stealth as published, paced like a person: its retired GREASE brand and its page/worker disagreement; never allowed, never human", async () => {
      const p = await page(undefined, stealthBrowser);
      await open(p, signupUrl);
      const { event } = await submitAndRead(p, "shop", () =>
        actLikeAPerson(p, { email: "stealth@example.org" }),
      );
      expect(event?.actorType).toBe("agent_abusive");
      expect(event?.decision).not.toBe("allow");
      const reasons = event?.reasons.join(" ") ?? "";
      expect(reasons).toMatch(/GREASE brand " Not A;Brand"/);
      expect(reasons).toMatch(/a worker it started read a different .*platform/);
      expect(reasons).toMatch(/Accept-Language comes between User-Agent and Accept/);
      expect(pageFindings(event)).toEqual([]);
      await p.context().close();
    }, 60_000);

    it("the same stealth setup with correct client hints, paced like a person: its page's worker and its header order still tell; not allowed, not human", async () => {
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
      await open(p, signupUrl);
      const { event } = await submitAndRead(p, "shop", () =>
        actLikeAPerson(p, { email: "careful@example.org" }),
      );
      const reasons = event?.reasons.join(" ") ?? "";
      expect(reasons).not.toMatch(/GREASE/);
      expect(reasons).toMatch(/a worker it started read a different/);
      expect(reasons).toMatch(/Accept-Language comes between User-Agent and Accept/);
      expect(event?.decision).not.toBe("allow");
      expect(event?.actorType).not.toBe("human");
      expect(pageFindings(event)).toEqual([]);
      await p.context().close();
    }, 60_000);

    it("the challenged flow works with the keyboard alone (a person-paced browser over the busy tenant's velocity limit), and the status is announced", async () => {
      const p = await page(undefined, personBrowser);
      await open(p, busyUrl);
      const { event, answer } = await submitAndRead(p, "busy", async () => {
        await p.keyboard.press("Tab");
        await p.keyboard.type("kim@example.org", { delay: between(60, 120) });
        await p.keyboard.press("Tab");
        await p.keyboard.type("Kim", { delay: between(60, 120) });
        await takeAPersonsTime(p);
        await p.keyboard.press("Enter");
      });
      expect(answer.json.code).toBe("warden_challenge");
      expect(event?.decision).toBe("challenge");
      expect(event?.actorType).not.toBe("agent_abusive");
      expect(pageFindings(event)).toEqual([]);
      const button = p.locator("warden-challenge button");
      await button.waitFor();
      // The page focuses the element, which hands focus to its button (in its shadow root); Enter starts the check.
      await expect
        .poll(() => button.evaluate((b) => b === (b.getRootNode() as ShadowRoot).activeElement))
        .toBe(true);
      await p.keyboard.press("Enter");
      expect(await outcome(p)).toBe("created");
      expect(busyAccounts.get("kim@example.org")).toMatchObject({ name: "Kim" });
      await p.context().close();
    }, 90_000);
  });
}
