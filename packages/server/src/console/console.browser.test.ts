import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { hostingNetworks } from "../deps.js";
import { chromiumOrSkip } from "../testing/chromium.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../testing/harness.js";
import { CONSOLE_DIST } from "./assets.js";

/**
 * The operator console end to end in Debian's Chromium, against a real app on a fresh SQLite file.
 * The store is seeded through the public API only (verify with browser-like, bare, scripted and
 * hosting-network evidence for a mix of allow, challenge and deny; feedback with abuse_confirmed,
 * converted, false_positive and one conflicting observation, which is quarantined; challenges issued
 * for two events). Then, signed in with a ledger:read key, every page's figures are checked against
 * what the API answers with the Bearer key for the same filters; what-if moves in the direction the
 * cost rule implies; another tenant's key sees nothing of the first tenant's; and signing out ends the
 * session server-side. A full-page screenshot of each page goes to artifacts/console/<page>.png.
 *
 * Then its accessibility, from the tree Chromium gives assistive technology (over CDP): on every page
 * each control has a name from a label or its text, there is one h1 in the one main landmark, every
 * image is named or aria-hidden, and each chart names (aria-details) a table holding the figures it
 * draws; and with the keyboard alone one signs in, skips to the content, reaches each page of the nav
 * by Tab and follows it with Enter, and moves the what-if sliders with the arrow keys (the figures are
 * asked for again and change), with a visible focus ring on every link, button and slider passed.
 *
 * Needs the console built (node packages/console/build.mjs, part of npm run build).
 */
const SUITE = "the operator console in Chromium";

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, "../../../..");
const CONSOLE_INDEX = path.join(CONSOLE_DIST, "index.html");
const SHOTS = path.join(REPO, "artifacts/console");

type Json = Record<string, unknown>;

/** How long a page may take to show what it loaded (the machines are shared and slow at times). */
const POLL_MS = 10_000;

if (chromiumOrSkip(SUITE)) {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let readKey: string;
  let otherKey: string;
  let noScopeKey: string;
  /** eventIds by what they were seeded as. */
  const seeded: Record<string, string[]> = {};
  let conflictedEvent: string;
  /** How far the app's clock is from the real one while seeding. */
  let offset = 0;
  const DAY_MS = 86_400_000;

  const post = async (apiKey: string, url: string, payload: Json) => {
    const res = await t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });
    return { status: res.statusCode, body: res.json() as Json };
  };

  /** GET through the network with the Bearer key, as an integrator would. */
  async function api<T = Json>(pathname: string, query: Record<string, string | number | undefined> = {}) {
    const url = new URL(pathname, base);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const res = await fetch(url, { headers: { authorization: `Bearer ${readKey}` } });
    expect(res.status, `${pathname} ${await res.clone().text()}`).toBe(200);
    return (await res.json()) as T;
  }

  async function verify(name: string, action: string, subject: Json, context?: Json) {
    const session = `s-${name}-${(seeded[name]?.length ?? 0) + 1}`;
    const v = await post(readKey, "/v1/verify", {
      action,
      session,
      subject,
      ...(context ? { context } : {}),
    });
    expect(v.status).toBe(200);
    seeded[name] = [...(seeded[name] ?? []), v.body.eventId as string];
    return { ...v.body, session } as Json & { eventId: string; decision: string; session: string };
  }

  const feedback = (eventId: string, outcome: string, extra: Json = {}) =>
    post(readKey, "/v1/feedback", { eventId, outcome, source: "trust_queue", ...extra });

  beforeAll(async () => {
    if (!fs.existsSync(CONSOLE_INDEX)) {
      throw new Error(
        `${CONSOLE_INDEX} is missing: build the console first (node packages/console/build.mjs)`,
      );
    }
    // The app's clock runs `offset` ms from the real one: the seeded traffic is spread over the last
    // six days (the chart has a shape), and is back at the real time before anyone signs in.
    // Every test signs in from this machine: more than the default sign-ins per address and minute.
    t = await makeTestApp({
      hosting: hostingNetworks(),
      clock: () => Date.now() + offset,
      env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "1000" },
    });
    // rawPii: the raw address (a disposable mailbox) is what makes the strongest evidence, a deny.
    await t.tenant("shop", { rawPii: true });
    await t.tenant("other");
    readKey = (await t.key("shop")).apiKey;
    otherKey = (await t.key("other")).apiKey;
    noScopeKey = (await t.key("shop", { scopes: ["verify:write"] })).apiKey;
    const address = await t.app.listen({ host: "127.0.0.1", port: 0 });
    // localhost is a secure context (the clipboard API), and the cookie is host-only either way.
    base = `http://localhost:${new URL(address).port}/`;

    const browserLike = { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "198.51.100.0/24" };
    const hostingChrome = { userAgent: CHROME_UA, ipTrunc: "3.5.140.0/24" };
    const scripted = { userAgent: "python-requests/2.31.0" };
    const scriptedHosting = { userAgent: "curl/8.5.0", ipTrunc: "3.5.140.0/24" };
    const abusive = { userAgent: "curl/8.5.0", email: "x@mailinator.com" };
    const kinds: { name: string; n: number; action(i: number): string; subject: Json; context?: Json }[] = [
      { name: "human", n: 14, action: (i) => (i % 2 ? "login" : "signup"), subject: browserLike },
      { name: "hosting", n: 9, action: (i) => (i % 3 ? "signup" : "login"), subject: hostingChrome },
      { name: "scripted", n: 7, action: () => "signup", subject: scripted },
      { name: "scriptedHosting", n: 6, action: () => "login", subject: scriptedHosting },
      { name: "abusive", n: 5, action: () => "signup", subject: abusive },
      { name: "logOnly", n: 3, action: () => "signup", subject: scripted, context: { logOnly: true } },
      { name: "bare", n: 3, action: () => "signup", subject: {} },
    ];
    // Round robin over the kinds, so every day has a mix.
    const plan: { kind: (typeof kinds)[number]; i: number }[] = [];
    for (let i = 0; plan.length < kinds.reduce((n, k) => n + k.n, 0); i++) {
      for (const kind of kinds) if (i < kind.n) plan.push({ kind, i });
    }
    let challengedOld = false;
    for (const [k, { kind, i }] of plan.entries()) {
      offset = -Math.round(((plan.length - k) / plan.length) * 6 * DAY_MS);
      const v = await verify(kind.name, kind.action(i), kind.subject, kind.context);
      if (kind.name === "scripted" && !challengedOld) {
        // Issued days ago and never solved: expired by now.
        expect(v.decision).toBe("challenge");
        expect(
          (await post(readKey, "/v1/challenge", { eventId: v.eventId, session: v.session })).status,
        ).toBe(200);
        challengedOld = true;
      }
    }
    offset = 0;
    // A scripted client challenged just now: an open challenge.
    const fresh = await verify("scripted", "signup", scripted);
    expect(
      (await post(readKey, "/v1/challenge", { eventId: fresh.eventId, session: fresh.session })).status,
    ).toBe(200);

    const decisionOf = async (id: string) =>
      ((await api<{ event: Json }>(`/v1/events/${id}`)).event.decision as string) ?? "";
    const [human1 = "", human2 = ""] = seeded.human ?? [];
    const [hosting1 = ""] = seeded.hosting ?? [];
    const [scripted1 = "", scripted2 = ""] = seeded.scripted ?? [];
    const [abusive1 = ""] = seeded.abusive ?? [];
    expect(await decisionOf(human1)).toBe("allow");
    expect(await decisionOf(hosting1)).toBe("allow");
    expect(await decisionOf(scripted2)).toBe("challenge");
    expect(await decisionOf(abusive1)).toBe("deny");

    // Allowed, later abuse; challenged, later converted or a false positive; denied and abusive.
    expect((await feedback(hosting1, "abuse_confirmed")).status).toBe(200);
    expect((await feedback(human1, "converted", { value: 120, unit: "usd", source: "billing" })).status).toBe(
      200,
    );
    expect(
      (await feedback(scripted1, "converted", { value: 40, unit: "usd", source: "billing" })).status,
    ).toBe(200);
    expect((await feedback(scripted2, "false_positive", { source: "manual_review" })).status).toBe(200);
    for (const id of seeded.abusive ?? []) expect((await feedback(id, "abuse_confirmed")).status).toBe(200);
    for (const id of (seeded.scriptedHosting ?? []).slice(0, 3)) {
      expect((await feedback(id, "credit_burn", { value: 25, unit: "credits" })).status).toBe(200);
    }
    for (const id of (seeded.human ?? []).slice(2, 8)) {
      expect((await feedback(id, "converted", { value: 60, unit: "usd", source: "billing" })).status).toBe(
        200,
      );
    }
    // converted first, then abuse_confirmed on the same event: the second is quarantined.
    expect((await feedback(human2, "converted", { value: 15, unit: "usd", source: "billing" })).status).toBe(
      200,
    );
    expect((await feedback(human2, "abuse_confirmed")).status).toBe(200);
    conflictedEvent = human2;

    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function newPage(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: "UTC" });
    const page = await context.newPage();
    const problems: string[] = [];
    // A CSP violation or a script error is a failure, whatever the page shows.
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error" && !/status of (401|403|404)/.test(m.text())) problems.push(m.text());
    });
    return { context, page, problems };
  }

  async function signIn(page: Page, apiKey: string) {
    await page.goto(`${base}console/`);
    const field = page.getByLabel("API key", { exact: true });
    await field.fill(apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("tenant-id").waitFor();
  }

  /**
   * Until no request of the page is loading (its live region no longer says so). Polled from here:
   * the console's CSP (no 'unsafe-eval') refuses waitForFunction's evaluated predicates.
   */
  async function nothingLoading(page: Page) {
    await expect.poll(() => page.locator(".status .loading").count(), { timeout: POLL_MS }).toBe(0);
  }

  /** Opens a page by its hash, waits for that page (main[data-route]) and until nothing is loading. */
  async function open(page: Page, hash: string, route: string) {
    await page.goto(`${base}console/${hash}`);
    await page.locator(`main[data-route="${route}"]`).waitFor();
    await nothingLoading(page);
  }

  const text = async (page: Page, testId: string) =>
    ((await page.getByTestId(testId).textContent()) ?? "").trim();

  async function shot(page: Page, name: string) {
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  }

  /** The range the page asked for, as the API echoed it. */
  async function pageRange(page: Page) {
    const note = page.getByTestId("range-note");
    return {
      since: (await note.getAttribute("data-since")) ?? "",
      until: (await note.getAttribute("data-until")) ?? "",
    };
  }

  describe(SUITE, () => {
    it("sign-in: refuses a key without ledger:read with the server's message, never keeps the key", async () => {
      const { context, page, problems } = await newPage();
      await page.goto(`${base}console/`);
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      await shot(page, "signin");
      await page.getByLabel("API key", { exact: true }).fill(noScopeKey);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByTestId("signin-error").waitFor();
      expect(await text(page, "signin-error")).toMatch(/lacks the ledger:read scope/);
      expect(await page.getByLabel("API key", { exact: true }).inputValue()).toBe("");
      await page.getByLabel("API key", { exact: true }).fill("wk_not_a_real_key");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => text(page, "signin-error"), { timeout: POLL_MS }).not.toMatch(/ledger:read/);
      await signIn(page, readKey);
      expect(await text(page, "tenant-id")).toBe("shop");
      expect(await page.getByLabel("API key", { exact: true }).count()).toBe(0);
      // Evaluated in the page (a string: this package compiles without the DOM's types).
      const stored = (await page.evaluate(
        "({ local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }), cookie: document.cookie })",
      )) as { local: string; session: string; cookie: string };
      expect(`${stored.local}${stored.session}${stored.cookie}`).not.toContain(readKey.slice(0, 12));
      expect(stored.cookie).not.toContain("warden_console"); // HttpOnly
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("overview: tiles, breakdowns and challenge outcomes equal the API's for the same filters", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, readKey);
      await open(page, "#/overview", "overview");
      const range = await pageRange(page);
      const check = async (action?: string) => {
        const stats = await api<{
          rows: { decision: string; degraded: boolean; enforcementMode: string; count: number }[];
        }>("/v1/stats/decisions", { ...range, action });
        const attempts = await api<{ rows: { ending: string; degraded: boolean; count: number }[] }>(
          "/v1/stats/attempts",
          { ...range, action },
        );
        const sum = (f: (r: (typeof stats.rows)[number]) => boolean) =>
          stats.rows.filter(f).reduce((n, r) => n + r.count, 0);
        const ended = (f: (r: (typeof attempts.rows)[number]) => boolean) =>
          attempts.rows.filter(f).reduce((n, r) => n + r.count, 0);
        const expected = {
          "attempts-total": ended(() => true),
          "attempts-allowed": ended((r) => r.ending === "allowed"),
          "attempts-cleared": ended((r) => r.ending === "cleared"),
          "attempts-challenged": ended((r) => r.ending === "challenged"),
          "attempts-denied": ended((r) => r.ending === "denied"),
          "attempts-degraded": ended((r) => r.degraded),
          "count-log-only": sum((r) => r.enforcementMode === "log_only"),
          "mode-allow-log_only": sum((r) => r.decision === "allow" && r.enforcementMode === "log_only"),
        };
        for (const [id, n] of Object.entries(expected)) {
          await expect.poll(() => text(page, id), { message: id, timeout: POLL_MS }).toBe(String(n));
        }
        return expected;
      };
      const all = await check();
      // The seeded mix: every ending but "cleared" is there (no clear is redeemed), and the log-only
      // answers; with no re-verify, every event is an attempt.
      expect(all["attempts-allowed"]).toBeGreaterThan(0);
      expect(all["attempts-challenged"]).toBeGreaterThan(0);
      expect(all["attempts-denied"]).toBeGreaterThan(0);
      expect(all["count-log-only"]).toBe(seeded.logOnly?.length);
      expect(all["attempts-total"]).toBe(Object.values(seeded).flat().length);

      const challenges = await api<{ rows: Record<string, number | string>[] }>(
        "/v1/stats/challenges",
        range,
      );
      const columns = ["issued", "cleared", "expired", "open", "redeemed"];
      // The one issued days ago has expired; the one issued just now is open.
      const sums = Object.fromEntries(
        columns.map((c) => [c, challenges.rows.reduce((n, r) => n + Number(r[c]), 0)]),
      );
      expect(sums).toEqual({ issued: 2, cleared: 0, expired: 1, open: 1, redeemed: 0 });
      for (const r of challenges.rows) {
        for (const c of columns) expect(await text(page, `challenges-${c}-${r.method}`)).toBe(String(r[c]));
      }
      await page.locator("details.alt summary").click();
      await shot(page, "overview");

      // One action only: the same filter on both sides.
      await page.getByLabel("Action", { exact: true }).selectOption("login");
      await expect
        .poll(() => page.getByTestId("range-note").textContent(), { timeout: POLL_MS })
        .toContain("action login");
      const login = await check("login");
      expect(login["attempts-total"]).toBeLessThan(all["attempts-total"]);
      // The CSV link carries the same filters.
      const csv = await page.getByRole("link", { name: /Download decisions/ }).getAttribute("href");
      expect(csv).toContain("format=csv");
      expect(csv).toContain("action=login");
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("events: the recent list pages with Load more, a session search and an event's detail match the API", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, readKey);
      await open(page, "#/events", "events");
      const total = Object.values(seeded).flat().length;
      expect(total).toBeGreaterThan(25);
      await expect.poll(() => text(page, "events-shown"), { timeout: POLL_MS }).toBe("25");
      await shot(page, "events");
      await page.getByRole("button", { name: "Load more" }).click();
      await expect.poll(() => text(page, "events-shown"), { timeout: POLL_MS }).toBe(String(total));
      // Newest first, as the API lists them.
      const listed = await api<{ items: { eventId: string }[] }>("/v1/events", { limit: 500 });
      const shown = await page.getByTestId("events-table").locator("tbody th").allTextContents();
      expect(shown).toEqual(listed.items.map((e) => e.eventId));

      // A filter the API applies the same way.
      await page.getByLabel("Decision", { exact: true }).selectOption("deny");
      const denied = await api<{ items: { eventId: string }[] }>("/v1/events", {
        decision: "deny",
        limit: 500,
      });
      await expect
        .poll(() => text(page, "events-shown"), { timeout: POLL_MS })
        .toBe(String(denied.items.length));
      await page.getByLabel("Decision", { exact: true }).selectOption("");

      // A session search lists that session's events.
      await page
        .getByLabel("Email, email hash, IP or network, session or event ID", { exact: true })
        .fill("s-human-2");
      await page.getByRole("button", { name: "Search" }).click();
      const bySession = await api<{ items: { eventId: string }[] }>("/v1/events", { session: "s-human-2" });
      await expect
        .poll(() => text(page, "events-shown"), { timeout: POLL_MS })
        .toBe(String(bySession.items.length));
      expect(await page.getByTestId("events-table").locator("tbody th").allTextContents()).toEqual(
        bySession.items.map((e) => e.eventId),
      );

      // An eventId opens the event: verdict, observations with the quarantined one and what it conflicts with.
      await page
        .getByLabel("Email, email hash, IP or network, session or event ID", { exact: true })
        .fill(conflictedEvent);
      await page.getByRole("button", { name: "Search" }).click();
      await page.getByTestId("event-decision").waitFor();
      const detail = await api<{
        event: Json;
        observations: { feedbackId: string; status: string; conflictsWith: string | null }[];
        challenges?: unknown[];
      }>(`/v1/events/${conflictedEvent}`);
      expect(await text(page, "event-decision")).toBe(detail.event.decision);
      expect(await text(page, "event-actor-type")).toBe(String(detail.event.actorType).replace(/_/g, " "));
      expect(await text(page, "event-policy-version")).toBe(detail.event.policyVersion);
      expect(await text(page, "event-engine-version")).toBe(detail.event.engineVersion);
      const quarantined = detail.observations.find((o) => o.status === "quarantined");
      expect(quarantined?.conflictsWith).toBeTruthy();
      for (const o of detail.observations) {
        expect(await text(page, `observation-status-${o.feedbackId}`)).toBe(o.status);
      }
      const obsTable = page.getByTestId("event-observations-table");
      expect(await obsTable.textContent()).toContain(quarantined?.conflictsWith ?? "?");
      expect(await page.getByTestId("token-claims-table").locator("tbody tr").count()).toBe(
        Object.keys((detail.event.tokenClaims as Json | undefined) ?? {}).length || 1,
      );
      expect(await page.getByTestId("event-signals").textContent()).toContain("risk");

      // A challenged event shows its challenge (and the feedback on it).
      const challenged = seeded.scripted?.[0] ?? "";
      await open(page, `#/events/${challenged}`, `event:${challenged}`);
      await page.getByTestId("event-decision").waitFor();
      const withChallenge = await api<{ challenges?: unknown[] }>(`/v1/events/${challenged}`);
      expect(withChallenge.challenges?.length).toBe(1);
      expect(await page.getByTestId("event-challenges-table").locator("tbody tr").count()).toBe(1);
      expect(await page.getByTestId("event-observations-table").textContent()).toContain("converted");
      await shot(page, "event");
      expect(problems).toEqual([]);
      await context.close();
    }, 90_000);

    it("outcomes: the decision × outcome matrix and the quarantined list equal the API's", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, readKey);
      await open(page, "#/outcomes", "outcomes");
      await page.getByTestId("outcomes-table").waitFor();
      const range = await pageRange(page);
      const stats = await api<{
        rows: { decision: string; outcome: string; events: number }[];
        decisions: Record<string, number>;
        quarantinedCount: number;
      }>("/v1/stats/outcomes", range);
      expect(stats.rows.length).toBeGreaterThan(0);
      for (const r of stats.rows) {
        expect(await text(page, `outcome-${r.decision}-${r.outcome}`)).toBe(String(r.events));
      }
      for (const [d, n] of Object.entries(stats.decisions)) {
        expect(await text(page, `outcomes-decisions-${d}`)).toBe(String(n));
      }
      // The misses and the friction are said in words.
      const findings = (await page.getByTestId("outcome-findings").textContent()) ?? "";
      expect(findings).toMatch(/decided allow later had abuse confirmed \(allowed, later abuse/);
      expect(findings).toMatch(/decided challenge later had converted \(friction on a good user/);
      expect(findings).toMatch(/decided challenge later had false positive \(friction on a good user/);
      expect(stats.quarantinedCount).toBe(1);
      expect(await text(page, "quarantined-count")).toBe("1");
      const quarantined = await api<{ items: { observation: Json; conflictsWith: Json | null }[] }>(
        "/v1/feedback/quarantined",
        range,
      );
      expect(quarantined.items).toHaveLength(1);
      await page.getByTestId("quarantined-table").waitFor();
      const row = page.getByTestId("quarantined-table").locator("tbody tr");
      expect(await row.count()).toBe(1);
      const rowText = (await row.textContent()) ?? "";
      expect(rowText).toContain(conflictedEvent);
      expect(rowText).toContain("abuse confirmed");
      expect(rowText).toContain("converted");
      expect(rowText).toContain(String(quarantined.items[0]?.observation.feedbackId));
      await shot(page, "outcomes");
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("calibration: the totals and every bin of the table equal the API's", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, readKey);
      await open(page, "#/calibration", "calibration");
      await page.getByTestId("calibration-table").waitFor();
      const range = await pageRange(page);
      const stats = await api<{
        bins: { events: number; labelled: number; abusive: number }[];
        events: number;
        labelled: number;
        abusive: number;
      }>("/v1/stats/calibration", { ...range, bins: 10 });
      expect(await text(page, "calibration-events")).toBe(String(stats.events));
      expect(await text(page, "calibration-labelled")).toBe(String(stats.labelled));
      expect(await text(page, "calibration-abusive")).toBe(String(stats.abusive));
      expect(stats.labelled).toBeGreaterThan(0);
      const rows = page.getByTestId("calibration-table").locator("tbody tr");
      expect(await rows.count()).toBe(stats.bins.length);
      for (const [i, b] of stats.bins.entries()) {
        const cells = await rows.nth(i).locator("td").allTextContents();
        expect(cells.slice(0, 3)).toEqual([String(b.events), String(b.labelled), String(b.abusive)]);
      }
      expect(await page.getByTestId("reliability-diagram").count()).toBe(1);
      await shot(page, "calibration");
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("what-if: counts equal the API's, and raising falseAllow moves allows to challenge, never the other way", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, readKey);
      await open(page, "#/what-if", "what-if");
      await page.getByTestId("whatif-results").waitFor();
      const range = await pageRange(page);
      const at = async (falseAllow: number) => {
        await page.getByLabel("Cost of a false allow, as a number", { exact: true }).fill(String(falseAllow));
        await expect
          .poll(() => page.getByTestId("whatif-results").getAttribute("data-costs"), { timeout: POLL_MS })
          .toBe(`${falseAllow},1,3`);
        await nothingLoading(page);
        const shown = {
          allow: Number(await text(page, "whatif-allow")),
          challenge: Number(await text(page, "whatif-challenge")),
          deny: Number(await text(page, "whatif-deny")),
        };
        const answer = await api<{ whatIf: typeof shown; recorded: typeof shown }>("/v1/stats/what-if", {
          ...range,
          falseAllow,
          falseChallenge: 1,
          falseDeny: 3,
        });
        expect(shown).toEqual(answer.whatIf);
        expect(Number(await text(page, "recorded-allow"))).toBe(answer.recorded.allow);
        return shown;
      };
      const steps = [];
      for (const falseAllow of [1, 3, 20]) steps.push(await at(falseAllow));
      for (let i = 1; i < steps.length; i++) {
        const [before, after] = [steps[i - 1], steps[i]] as const;
        if (!before || !after) throw new Error("unreachable");
        expect(after.allow).toBeLessThanOrEqual(before.allow);
        expect(after.challenge + after.deny).toBeGreaterThanOrEqual(before.challenge + before.deny);
      }
      // The seeded hosting-network Chrome visitors (allowed at 1) are challenged at 20.
      const [first, last] = [steps[0], steps[steps.length - 1]];
      expect(last?.allow).toBeLessThan(first?.allow ?? 0);
      expect((last?.challenge ?? 0) + (last?.deny ?? 0)).toBeGreaterThan(
        (first?.challenge ?? 0) + (first?.deny ?? 0),
      );

      // The policy to hand to the CLI, shown and never applied.
      await page.getByRole("button", { name: "Show policy JSON" }).click();
      const policy = JSON.parse((await page.getByTestId("policy-json").textContent()) ?? "null");
      const answer = await api<{ policy: unknown }>("/v1/stats/what-if", {
        ...range,
        falseAllow: 20,
        falseChallenge: 1,
        falseDeny: 3,
      });
      expect(policy).toEqual(answer.policy);
      expect(await text(page, "policy-command")).toBe("warden policy set --tenant shop --file policy.json");
      await shot(page, "what-if");
      expect(problems).toEqual([]);
      await context.close();
    }, 90_000);

    it("another tenant's key sees none of the first tenant's events, and its eventId answers 404", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, otherKey);
      expect(await text(page, "tenant-id")).toBe("other");
      await open(page, "#/overview", "overview");
      await expect.poll(() => text(page, "attempts-total"), { timeout: POLL_MS }).toBe("0");
      const foreign = seeded.human?.[0] ?? "";
      await open(page, `#/events/${foreign}`, `event:${foreign}`);
      await page.getByTestId("event-not-found").waitFor();
      expect(await page.getByTestId("event-decision").count()).toBe(0);
      expect((await page.getByTestId("status").textContent()) ?? "").toMatch(/unknown_event_id/);
      await open(page, "#/events", "events");
      await expect.poll(() => text(page, "events-shown"), { timeout: POLL_MS }).toBe("0");
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("sign-out ends the session: the old cookie answers 401 and the console shows sign-in", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, readKey);
      const cookie = (await context.cookies()).find((c) => c.name === "warden_console");
      expect(cookie?.httpOnly).toBe(true);
      expect(cookie?.sameSite).toBe("Strict");
      const withCookie = () =>
        fetch(new URL("/v1/stats/decisions", base), {
          headers: { cookie: `warden_console=${cookie?.value}` },
        });
      expect((await withCookie()).status).toBe(200);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("API key", { exact: true }).waitFor();
      const after = await withCookie();
      expect(after.status).toBe(401);
      expect(((await after.json()) as Json).code).toBe("console_session_required");
      // Reloaded, the console asks the server, which knows no session: sign-in again.
      await page.goto(`${base}console/#/overview`);
      await page.reload();
      await page.getByLabel("API key", { exact: true }).waitFor();
      expect(await page.getByTestId("tenant-id").count()).toBe(0);
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);
  });

  // Accessibility. The audit reads the tree Chromium builds for assistive technology (over CDP, the
  // browser's own computation of roles and names), not the DOM's guess at it.

  /** The parts of a CDP accessibility node the checks read. */
  interface AXNode {
    nodeId: string;
    ignored: boolean;
    ignoredReasons?: { name: string }[];
    role?: { value?: unknown };
    name?: {
      value?: unknown;
      /** Where the name could come from, in order; the one used has a value and is not superseded. */
      sources?: { type: string; attribute?: string; superseded?: boolean; value?: unknown }[];
    };
    properties?: {
      name: string;
      value: { value?: unknown; relatedNodes?: { backendDOMNodeId: number }[] };
    }[];
    parentId?: string;
    backendDOMNodeId?: number;
  }
  interface DomNode {
    backendNodeId: number;
    tag: string;
    attrs: Record<string, string>;
  }
  /** A chart: the named image holding a canvas or an SVG, and (a selector of) its table alternative. */
  interface Chart {
    name: string;
    kind: string;
    attrs: Record<string, string>;
    table: string;
  }
  interface Audit {
    problems: string[];
    /** Every control on the page as `role "name"`. */
    controls: string[];
    charts: Chart[];
  }

  const axRole = (n: AXNode | undefined) => String(n?.role?.value ?? "");
  const axName = (n: AXNode | undefined) => String(n?.name?.value ?? "").trim();
  const axReasons = (n: AXNode) => (n.ignoredReasons ?? []).map((r) => r.name);
  const axProp = (n: AXNode, name: string) => n.properties?.find((p) => p.name === name)?.value;
  const tagOf = (el: DomNode) =>
    `<${el.tag}${["id", "type", "class", "role"]
      .filter((a) => el.attrs[a])
      .map((a) => ` ${a}="${el.attrs[a]}"`)
      .join("")}>`;

  /**
   * What assistive technology is given on the page as it is now: every input, select, textarea and
   * button rendered has a name (from a label, aria-label(ledby) or its text, not a placeholder or a
   * title); one h1, exposed as the level-1 heading, inside the one main landmark;
   * every img, svg, canvas and role="img" is either aria-hidden (decorative) or part of an image with a
   * name; and every chart (a canvas or an SVG) is an image whose aria-details names a table.
   */
  async function audit(page: Page): Promise<Audit> {
    const cdp = await page.context().newCDPSession(page);
    try {
      const tree: AXNode[] = (await cdp.send("Accessibility.getFullAXTree")).nodes;
      const byAxId = new Map(tree.map((n) => [n.nodeId, n]));
      const byDom = new Map<number, AXNode>();
      for (const n of tree) if (n.backendDOMNodeId !== undefined) byDom.set(n.backendDOMNodeId, n);
      const parent = (n: AXNode) => (n.parentId === undefined ? undefined : byAxId.get(n.parentId));
      const { root } = await cdp.send("DOM.getDocument", { depth: 0 });
      const describe = async (target: { nodeId: number } | { backendNodeId: number }): Promise<DomNode> => {
        const { node } = await cdp.send("DOM.describeNode", target);
        const list = node.attributes ?? [];
        const attrs: Record<string, string> = {};
        for (let i = 0; i + 1 < list.length; i += 2) attrs[list[i] ?? ""] = list[i + 1] ?? "";
        return { backendNodeId: node.backendNodeId, tag: node.localName, attrs };
      };
      const select = async (selector: string) => {
        const { nodeIds } = await cdp.send("DOM.querySelectorAll", { nodeId: root.nodeId, selector });
        return Promise.all(nodeIds.map((nodeId) => describe({ nodeId })));
      };
      const axOf = async (el: DomNode): Promise<AXNode | undefined> =>
        byDom.get(el.backendNodeId) ??
        (
          await cdp.send("Accessibility.getPartialAXTree", {
            backendNodeId: el.backendNodeId,
            fetchRelatives: false,
          })
        ).nodes[0];

      const problems: string[] = [];
      const controls: string[] = [];
      for (const el of await select("input, select, textarea, button")) {
        const n = await axOf(el);
        if (!n) {
          problems.push(`${tagOf(el)} is not in the accessibility tree`);
          continue;
        }
        if (n.ignored) {
          // display: none or hidden: not on the page for anyone.
          if (axReasons(n).includes("notRendered")) continue;
          problems.push(`${tagOf(el)} is hidden from assistive technology (${axReasons(n).join(", ")})`);
          continue;
        }
        const name = axName(n);
        // A placeholder or a title is a hint, not a label (it goes once something is typed, or shows
        // only on hover): Chromium falls back to it for a name, this audit does not.
        const source = n.name?.sources?.find((src) => src.value !== undefined && !src.superseded);
        if (!name) problems.push(`${tagOf(el)} (${axRole(n)}) has no accessible name`);
        else if (source?.type === "placeholder" || source?.attribute === "title") {
          problems.push(`${tagOf(el)} (${axRole(n)}) is named only by its ${source.attribute} "${name}"`);
        } else controls.push(`${axRole(n)} "${name}"`);
      }

      const h1s = await select("h1");
      if (h1s.length !== 1) problems.push(`${h1s.length} h1 elements, not one`);
      const exposed = tree.filter((n) => !n.ignored);
      const level1 = exposed.filter((n) => axRole(n) === "heading" && axProp(n, "level")?.value === 1);
      const mains = exposed.filter((n) => axRole(n) === "main");
      if (level1.length !== 1) problems.push(`${level1.length} level-1 headings exposed, not one`);
      if (mains.length !== 1) problems.push(`${mains.length} main landmarks exposed, not one`);
      const [h1, main] = [level1[0], mains[0]];
      if (h1 && !axName(h1)) problems.push("the h1 has no text");
      if (h1 && main) {
        let p = parent(h1);
        while (p && p !== main) p = parent(p);
        if (!p) problems.push("the h1 is not inside the main landmark");
      }

      const charts = new Map<string, Chart>();
      for (const el of await select("img, svg, canvas, [role='img']")) {
        const n = await axOf(el);
        if (!n) {
          problems.push(`${tagOf(el)} is not in the accessibility tree`);
          continue;
        }
        const why = axReasons(n);
        if (why.includes("notRendered")) continue;
        // Decorative, and said to be: aria-hidden on it or an ancestor.
        if (why.includes("ariaHiddenElement") || why.includes("ariaHiddenSubtree")) continue;
        let image: AXNode | undefined = n;
        while (image && !(!image.ignored && axRole(image) === "image")) image = parent(image);
        if (!image) {
          problems.push(
            `${tagOf(el)} is neither aria-hidden nor part of an image (role ${axRole(n) || "none"})`,
          );
          continue;
        }
        if (!axName(image)) {
          problems.push(`${tagOf(el)}: its image has no accessible name`);
          continue;
        }
        if ((el.tag !== "canvas" && el.tag !== "svg") || charts.has(image.nodeId)) continue;
        // aria-details names the table, or the <details> disclosure holding it (Chromium drops a
        // reference to a table that is not rendered, as in a closed <details>).
        const related = axProp(image, "details")?.relatedNodes?.[0];
        const target = related ? await describe({ backendNodeId: related.backendDOMNodeId }) : null;
        let table = "";
        if (target?.tag === "table" && target.attrs.id) table = `table[id="${target.attrs.id}"]`;
        if (target?.tag === "details" && target.attrs.id) {
          const inside = `details[id="${target.attrs.id}"] table`;
          if ((await select(inside)).length === 1) table = inside;
        }
        if (!table) problems.push(`the chart "${axName(image)}" names no table alternative (aria-details)`);
        const chart =
          image.backendDOMNodeId === undefined
            ? el
            : await describe({ backendNodeId: image.backendDOMNodeId });
        charts.set(image.nodeId, { name: axName(image), kind: el.tag, attrs: chart.attrs, table });
      }
      return { problems, controls, charts: [...charts.values()] };
    } finally {
      await cdp.detach();
    }
  }

  /** A table's column headers and body cells, as text. */
  async function tableCells(page: Page, selector: string) {
    const table = page.locator(selector);
    const headers = (await table.locator("thead th").allTextContents()).map((h) => h.trim());
    const rows: string[][] = [];
    for (const tr of await table.locator("tbody tr").all()) {
      rows.push((await tr.locator("th, td").allTextContents()).map((c) => c.trim()));
    }
    const column = (label: string) => {
      const i = headers.indexOf(label);
      expect(i, `${selector} has a column ${label}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    return { headers, rows, column };
  }

  /** "12.3%" → 0.123. */
  const percentValue = (text: string | null | undefined) => {
    expect(text ?? "").toMatch(/^-?\d+(\.\d+)?%$/);
    return Number((text ?? "").replace("%", "")) / 100;
  };

  /**
   * A uPlot chart against its table: the figures it drew (data-series on the chart) are, bucket by bucket,
   * the table's rows (the buckets without events left out), and the API's for the same range.
   */
  async function checkTimeChart(page: Page, chart: Chart) {
    const plotted = JSON.parse(chart.attrs["data-series"] ?? "null") as {
      x: number[];
      series: { label: string; values: number[] }[];
    } | null;
    if (!plotted) throw new Error(`the chart "${chart.name}" says nothing of what it drew (data-series)`);
    const { headers, rows } = await tableCells(page, chart.table);
    for (const s of plotted.series) expect(headers, `a column for ${s.label}`).toContain(s.label);
    const drawn = plotted.x.flatMap((_, i) =>
      plotted.series.some((s) => (s.values[i] ?? 0) > 0) ? [i] : [],
    );
    expect(drawn.length).toBeGreaterThan(1);
    const minute = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
    const expected = drawn.map((i) =>
      headers.map((h, c) => {
        if (c === 0) return minute(plotted.x[i] ?? 0);
        const s = plotted.series.find((line) => line.label === h);
        if (s) return String(s.values[i]);
        if (h === "Total") return String(plotted.series.reduce((n, line) => n + (line.values[i] ?? 0), 0));
        return `(column ${h})`;
      }),
    );
    expect(rows).toEqual(expected);
    // And what it drew is what the API answers for the page's range, bucket by bucket.
    const stats = await api<{ rows: { bucketStart: string; decision: string; count: number }[] }>(
      "/v1/stats/decisions",
      await pageRange(page),
    );
    const byBucket = new Map<string, number>();
    for (const r of stats.rows) {
      const key = `${Date.parse(r.bucketStart) / 1000}|${r.decision}`;
      byBucket.set(key, (byBucket.get(key) ?? 0) + r.count);
    }
    for (const s of plotted.series) {
      expect(s.values, `${s.label} per bucket`).toEqual(
        plotted.x.map((x) => byBucket.get(`${x}|${s.label.toLowerCase()}`) ?? 0),
      );
    }
  }

  /**
   * The reliability diagram against its table, read the way a sighted reader reads it: the axes' scale
   * from the first and last tick labels, each drawn point's mean risk (x) and observed rate (y) and its
   * error bar's ends equal the table's row for that bin (to the table's 0.1%).
   */
  async function checkReliabilityDiagram(page: Page, chart: Chart) {
    const svg = page.locator(`svg[aria-details="${chart.attrs["aria-details"]}"]`);
    const attr = async (loc: ReturnType<Page["locator"]>, name: string) =>
      Number(await loc.getAttribute(name));
    const ticks = svg.locator("g.tick");
    const tick = async (i: number) => {
      const g = ticks.nth(i);
      return {
        x: await attr(g.locator("line").nth(0), "x1"),
        y: await attr(g.locator("line").nth(1), "y1"),
        xValue: percentValue(await g.locator("text").nth(0).textContent()),
        yValue: percentValue(await g.locator("text").nth(1).textContent()),
      };
    };
    const [a, b] = [await tick(0), await tick((await ticks.count()) - 1)];
    expect(b.xValue).toBeGreaterThan(a.xValue);
    const xValue = (px: number) => a.xValue + ((px - a.x) / (b.x - a.x)) * (b.xValue - a.xValue);
    const yValue = (py: number) => a.yValue + ((py - a.y) / (b.y - a.y)) * (b.yValue - a.yValue);
    const near = (drawn: number, shown: string, what: string) =>
      expect(Math.abs(drawn - percentValue(shown)), `${what}: drawn ${drawn}, table ${shown}`).toBeLessThan(
        0.00051,
      );

    const { rows, column } = await tableCells(page, chart.table);
    const labelled = rows.filter((r) => Number(r[column("Labelled")]) > 0);
    const bins = svg.locator("g.bin");
    expect(labelled.length).toBeGreaterThan(0);
    expect(await bins.count()).toBe(labelled.length);
    for (const [i, row] of labelled.entries()) {
      const bin = bins.nth(i);
      const range = row[column("Risk range")];
      const point = bin.locator("circle");
      near(xValue(await attr(point, "cx")), row[column("Mean risk")] ?? "", `${range} mean risk`);
      near(yValue(await attr(point, "cy")), row[column("Observed rate")] ?? "", `${range} observed rate`);
      const interval = row[column("95% interval")] ?? "";
      const bar = bin.locator("line.err");
      if (interval === "–") {
        expect(await bar.count()).toBe(0);
      } else {
        const [low = "", high = ""] = interval.split("–");
        near(yValue(await attr(bar.first(), "y1")), low, `${range} interval low`);
        near(yValue(await attr(bar.first(), "y2")), high, `${range} interval high`);
      }
    }
  }

  const PAGES: {
    name: string;
    open(page: Page): Promise<void>;
    /** The kinds of the charts on the page (canvas for uPlot, svg). */
    charts: string[];
    /** Some of the controls the audit must find, by role and name. */
    named: string[];
  }[] = [
    {
      name: "sign-in",
      open: async (page) => {
        await page.goto(`${base}console/`);
        await page.getByRole("heading", { name: "Sign in" }).waitFor();
      },
      charts: [],
      named: ['textbox "API key"', 'button "Sign in"'],
    },
    {
      name: "overview",
      open: async (page) => {
        await signIn(page, readKey);
        await open(page, "#/overview", "overview");
        await page.locator("main canvas").first().waitFor();
      },
      charts: ["canvas"],
      named: ['combobox "Time range"', 'combobox "Action"', 'combobox "Bucket"', 'button "Sign out"'],
    },
    {
      name: "events",
      open: async (page) => {
        await signIn(page, readKey);
        await open(page, "#/events", "events");
        await page.getByTestId("events-table").waitFor();
      },
      charts: [],
      named: [
        'searchbox "Email, email hash, IP or network, session or event ID"',
        'combobox "Decision"',
        'combobox "Reason code"',
        'button "Load more"',
      ],
    },
    {
      name: "event detail",
      open: async (page) => {
        await signIn(page, readKey);
        await open(page, `#/events/${conflictedEvent}`, `event:${conflictedEvent}`);
        await page.getByTestId("event-decision").waitFor();
      },
      charts: [],
      named: ['button "Sign out"'],
    },
    {
      name: "outcomes",
      open: async (page) => {
        await signIn(page, readKey);
        await open(page, "#/outcomes", "outcomes");
        await page.getByTestId("quarantined-table").waitFor();
      },
      charts: [],
      named: ['combobox "Time range"'],
    },
    {
      name: "calibration",
      open: async (page) => {
        await signIn(page, readKey);
        await open(page, "#/calibration", "calibration");
        await page.getByTestId("reliability-diagram").waitFor();
      },
      charts: ["svg"],
      named: ['combobox "Bins"', 'checkbox "Show the full 0–100% range"'],
    },
    {
      name: "what-if, with the policy JSON shown",
      open: async (page) => {
        await signIn(page, readKey);
        await open(page, "#/what-if", "what-if");
        await page.getByTestId("whatif-results").waitFor();
        await page.getByRole("button", { name: "Show policy JSON" }).click();
        await page.getByTestId("policy-json").waitFor();
      },
      charts: [],
      named: [
        'slider "Cost of a false allow (letting abuse through)"',
        'spinbutton "Cost of a false allow, as a number"',
        'slider "Cost of a false deny (turning a good user away)"',
        'button "Copy JSON"',
      ],
    },
  ];

  /**
   * The element that has focus and how it is drawn, read in the page (a string, as above: this package
   * compiles without the DOM's types); null when nothing has focus (the body).
   */
  interface Focused {
    tag: string;
    id: string;
    type: string;
    text: string;
    inNav: boolean;
    outline: string;
    outlineWidth: number;
    boxShadow: string;
    valueText: string;
  }
  const FOCUSED = `(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return null;
    const style = getComputedStyle(el);
    return {
      tag: el.localName,
      id: el.id,
      type: el.getAttribute("type") || "",
      text: (el.textContent || "").trim().replace(/\\s+/g, " "),
      inNav: Boolean(el.closest("nav")),
      outline: style.outlineStyle,
      outlineWidth: parseFloat(style.outlineWidth) || 0,
      boxShadow: style.boxShadow,
      valueText: el.getAttribute("aria-valuetext") || "",
    };
  })()`;
  const focused = async (page: Page) => (await page.evaluate(FOCUSED)) as Focused | null;
  /** `a "Events"`, `input#f-since`: links, buttons and the like by their text, fields by their id. */
  const stopName = (f: Focused | null) =>
    !f
      ? "(nothing)"
      : f.id && f.tag !== "a" && f.tag !== "button"
        ? `${f.tag}#${f.id}`
        : `${f.tag} "${f.text}"`;

  /** A focus ring someone can see: an outline, or a box-shadow. */
  function expectVisibleFocus(f: Focused | null) {
    const ring =
      f !== null &&
      ((f.outline !== "none" && f.outlineWidth > 0) || (f.boxShadow !== "none" && f.boxShadow !== ""));
    expect(
      ring,
      `${stopName(f)} shows focus (outline ${f?.outline} ${f?.outlineWidth}px, box-shadow ${f?.boxShadow})`,
    ).toBe(true);
  }

  /** Presses Tab until `match` has focus (at most `most` times); every stop on the way. */
  async function tabTo(page: Page, match: (f: Focused) => boolean, most = 60): Promise<Focused[]> {
    const stops: Focused[] = [];
    for (let i = 0; i < most; i++) {
      await page.keyboard.press("Tab");
      const f = await focused(page);
      // A date-time field keeps focus while Tab moves through its parts: one stop.
      const last = stops.at(-1);
      if (f && !(last && f.id && last.id === f.id)) stops.push(f);
      if (f && match(f)) return stops;
    }
    throw new Error(`not reached with ${most} Tabs; focus went ${stops.map(stopName).join(", ")}`);
  }

  /** Each stop that is a link, a button, a summary or a slider shows where focus is. */
  function expectFocusRings(stops: Focused[]) {
    for (const f of stops) {
      if (f.tag === "a" || f.tag === "button" || f.tag === "summary" || f.type === "range")
        expectVisibleFocus(f);
    }
  }

  describe("the operator console's accessibility in Chromium", () => {
    for (const p of PAGES) {
      it(`${p.name}: every control named, one h1 in the main landmark, images named, each chart's figures in a table`, async () => {
        const { context, page, problems } = await newPage();
        await p.open(page);
        await nothingLoading(page);
        const found = await audit(page);
        expect(found.problems).toEqual([]);
        expect(found.controls).toEqual(expect.arrayContaining(p.named));
        expect(found.charts.map((c) => c.kind)).toEqual(p.charts);
        for (const chart of found.charts) {
          if (chart.kind === "canvas") await checkTimeChart(page, chart);
          else await checkReliabilityDiagram(page, chart);
        }
        expect(problems).toEqual([]);
        await context.close();
      }, 60_000);
    }

    it("keyboard only: sign in, skip to content, every page from the nav by Tab and Enter, what-if's sliders by arrow keys", async () => {
      const { context, page, problems } = await newPage();
      const whatIfAsked: URLSearchParams[] = [];
      page.on("request", (r) => {
        const url = new URL(r.url());
        if (url.pathname === "/v1/stats/what-if") whatIfAsked.push(url.searchParams);
      });

      // Sign in: the key field has focus on load; Tab goes on to Sign in, Shift+Tab back; type, Enter.
      await page.goto(`${base}console/`);
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      expect((await focused(page))?.id).toBe("api-key");
      await page.keyboard.press("Tab");
      expect(stopName(await focused(page))).toBe('button "Sign in"');
      expectVisibleFocus(await focused(page));
      await page.keyboard.press("Shift+Tab");
      expect((await focused(page))?.id).toBe("api-key");
      expectVisibleFocus(await focused(page));
      await page.keyboard.type(readKey);
      await page.keyboard.press("Enter");
      await page.getByTestId("tenant-id").waitFor();
      await page.locator('main[data-route="overview"]').waitFor();

      // From the top of a page: the skip link first, shown when focused; Enter moves focus to the
      // content, whose first control is next; the chart's table opens from its summary with Enter.
      const fresh = async (hash: string, route: string) => {
        await page.goto("about:blank");
        await open(page, hash, route);
        expect(await focused(page)).toBeNull();
      };
      await fresh("#/overview", "overview");
      await page.keyboard.press("Tab");
      const skip = await focused(page);
      expect(stopName(skip)).toBe('a "Skip to content"');
      expectVisibleFocus(skip);
      const box = await page.getByRole("link", { name: "Skip to content" }).boundingBox();
      expect(box && box.x >= 0 && box.y >= 0 && box.width > 0).toBe(true);
      await page.keyboard.press("Enter");
      expect((await focused(page))?.id).toBe("main");
      await page.keyboard.press("Tab");
      expect((await focused(page))?.id).toBe("f-range");
      const toTable = await tabTo(page, (f) => f.tag === "summary");
      expectFocusRings(toTable);
      expect(toTable.some((f) => f.inNav)).toBe(false);
      await page.keyboard.press("Enter");
      expect(await page.locator("details.alt").getAttribute("open")).not.toBeNull();
      expect(await page.getByTestId("decisions-table").isVisible()).toBe(true);

      // Each page of the nav: Tab from the top of another page reaches its link after the skip link and
      // the links before it; Enter follows it, marks it current and takes focus to the new page's h1.
      const nav = [
        { label: "Overview", hash: "#/overview", route: "overview", from: "#/events", fromRoute: "events" },
        { label: "Events", hash: "#/events", route: "events" },
        { label: "Outcomes", hash: "#/outcomes", route: "outcomes" },
        { label: "Calibration", hash: "#/calibration", route: "calibration" },
        { label: "What-if", hash: "#/what-if", route: "what-if" },
      ];
      for (const [i, link] of nav.entries()) {
        await fresh(link.from ?? "#/overview", link.fromRoute ?? "overview");
        const stops = await tabTo(page, (f) => f.inNav && f.text === link.label, nav.length + 2);
        expect(stops.map(stopName)).toEqual([
          'a "Skip to content"',
          ...nav.slice(0, i + 1).map((l) => `a "${l.label}"`),
        ]);
        expectFocusRings(stops);
        await page.keyboard.press("Enter");
        await page.locator(`main[data-route="${link.route}"]`).waitFor();
        expect(new URL(page.url()).hash).toBe(link.hash);
        expect(
          await page
            .getByRole("navigation")
            .getByRole("link", { name: link.label })
            .getAttribute("aria-current"),
        ).toBe("page");
        // The page's h1 takes focus once it has mounted (an effect, after the first paint).
        await expect
          .poll(async () => stopName(await focused(page)), { timeout: POLL_MS })
          .toBe(`h1 "${link.label}"`);
      }

      // What-if (focus on its h1): Tab to the falseAllow slider; each ArrowRight raises the weight it
      // says (aria-valuetext) and, once settled, the page asks the API again and shows its figures.
      const results = page.getByTestId("whatif-results");
      await results.waitFor();
      await nothingLoading(page);
      const figures = async () => ({
        allow: Number(await text(page, "whatif-allow")),
        challenge: Number(await text(page, "whatif-challenge")),
        deny: Number(await text(page, "whatif-deny")),
      });
      expect(await results.getAttribute("data-costs")).toBe("1,1,3");
      const before = await figures();
      const toSlider = await tabTo(page, (f) => f.id === "falseAllow-range");
      expectFocusRings(toSlider);
      let weight = Number(toSlider.at(-1)?.valueText);
      expect(weight).toBe(1);
      for (let i = 1; i <= 130; i++) {
        await page.keyboard.press("ArrowRight");
        const now = Number((await focused(page))?.valueText);
        expect(now, `the weight after ${i} ArrowRight`).toBeGreaterThan(weight);
        weight = now;
      }
      // About 10^(130 × 0.01) = 20; the number field says the same.
      expect(weight).toBeGreaterThan(19);
      expect(weight).toBeLessThan(21);
      expect(await page.getByTestId("cost-falseAllow").inputValue()).toBe(String(weight));
      await expect.poll(() => results.getAttribute("data-costs"), { timeout: POLL_MS }).toBe(`${weight},1,3`);
      await nothingLoading(page);
      expect(whatIfAsked.some((q) => q.get("falseAllow") === String(weight))).toBe(true);
      const after = await figures();
      const answer = await api<{ whatIf: typeof after }>("/v1/stats/what-if", {
        ...(await pageRange(page)),
        falseAllow: weight,
        falseChallenge: 1,
        falseDeny: 3,
      });
      expect(after).toEqual(answer.whatIf);
      expect(after.allow).toBeLessThan(before.allow);
      expect(after.challenge + after.deny).toBeGreaterThan(before.challenge + before.deny);

      // The falseChallenge slider: Home to its least weight, and ArrowRight still moves it from there;
      // End to its most, and ArrowLeft moves it back.
      const slider = await tabTo(page, (f) => f.id === "falseChallenge-range");
      expectFocusRings(slider);
      const moves: [string, (v: number) => boolean, string][] = [
        ["Home", (v) => v === 0.1, "0.1"],
        ["ArrowRight", (v) => v > 0.1, "above 0.1"],
        ["End", (v) => v === 100, "100"],
        ["ArrowLeft", (v) => v < 100, "below 100"],
      ];
      for (const [key, ok, what] of moves) {
        await page.keyboard.press(key);
        const f = await focused(page);
        expect(ok(Number(f?.valueText)), `after ${key}: ${f?.valueText}, ${what}`).toBe(true);
        expect(await page.getByTestId("cost-falseChallenge").inputValue()).toBe(f?.valueText);
      }
      const falseChallenge = (await focused(page))?.valueText;
      await expect
        .poll(() => results.getAttribute("data-costs"), { timeout: POLL_MS })
        .toBe(`${weight},${falseChallenge},3`);

      // Reset, by Tab and Enter: back to the current weights.
      const reset = await tabTo(page, (f) => f.text === "Reset to the current weights");
      expectFocusRings(reset);
      await page.keyboard.press("Enter");
      await expect.poll(() => results.getAttribute("data-costs"), { timeout: POLL_MS }).toBe("1,1,3");
      await nothingLoading(page);
      expect(await figures()).toEqual(before);
      expect(problems).toEqual([]);
      await context.close();
    }, 120_000);
  });
}
