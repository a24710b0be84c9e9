import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { chromiumOrSkip } from "../testing/chromium.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../testing/harness.js";

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
 * Needs the console built (node packages/console/build.mjs, part of npm run build).
 */
const SUITE = "the operator console in Chromium";

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, "../../../..");
const CONSOLE_INDEX = path.join(REPO, "packages/console/dist/index.html");
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
    t = await makeTestApp({ clock: () => Date.now() + offset });
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
        const sum = (f: (r: (typeof stats.rows)[number]) => boolean) =>
          stats.rows.filter(f).reduce((n, r) => n + r.count, 0);
        const expected = {
          "total-events": sum(() => true),
          "count-allow": sum((r) => r.decision === "allow"),
          "count-challenge": sum((r) => r.decision === "challenge"),
          "count-deny": sum((r) => r.decision === "deny"),
          "count-degraded": sum((r) => r.degraded),
          "count-log-only": sum((r) => r.enforcementMode === "log_only"),
          "mode-allow-log_only": sum((r) => r.decision === "allow" && r.enforcementMode === "log_only"),
        };
        for (const [id, n] of Object.entries(expected)) {
          await expect.poll(() => text(page, id), { message: id, timeout: POLL_MS }).toBe(String(n));
        }
        return expected;
      };
      const all = await check();
      // The seeded mix: every decision is there, and the log-only answers.
      expect(all["count-allow"]).toBeGreaterThan(0);
      expect(all["count-challenge"]).toBeGreaterThan(0);
      expect(all["count-deny"]).toBeGreaterThan(0);
      expect(all["count-log-only"]).toBe(seeded.logOnly?.length);
      expect(all["total-events"]).toBe(Object.values(seeded).flat().length);

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
      await page.getByLabel("Action", { exact: true }).fill("login");
      await page.getByLabel("Action", { exact: true }).press("Enter");
      await expect
        .poll(() => page.getByTestId("range-note").textContent(), { timeout: POLL_MS })
        .toContain("action login");
      const login = await check("login");
      expect(login["total-events"]).toBeLessThan(all["total-events"]);
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
      await page.getByLabel("Event ID or session", { exact: true }).fill("s-human-2");
      await page.getByRole("button", { name: "Search" }).click();
      const bySession = await api<{ items: { eventId: string }[] }>("/v1/events", { session: "s-human-2" });
      await expect
        .poll(() => text(page, "events-shown"), { timeout: POLL_MS })
        .toBe(String(bySession.items.length));
      expect(await page.getByTestId("events-table").locator("tbody th").allTextContents()).toEqual(
        bySession.items.map((e) => e.eventId),
      );

      // An eventId opens the event: verdict, observations with the quarantined one and what it conflicts with.
      await page.getByLabel("Event ID or session", { exact: true }).fill(conflictedEvent);
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
      expect(await text(page, "policy-command")).toBe("warden policy set shop policy.json");
      await shot(page, "what-if");
      expect(problems).toEqual([]);
      await context.close();
    }, 90_000);

    it("another tenant's key sees none of the first tenant's events, and its eventId answers 404", async () => {
      const { context, page, problems } = await newPage();
      await signIn(page, otherKey);
      expect(await text(page, "tenant-id")).toBe("other");
      await open(page, "#/overview", "overview");
      await expect.poll(() => text(page, "total-events"), { timeout: POLL_MS }).toBe("0");
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
}
