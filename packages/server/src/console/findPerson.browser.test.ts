import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { emailHash } from "../operations/verify/signals/email.js";
import { chromiumOrSkip, pastTheSecond, signedInConsole } from "../testing/chromium.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../testing/harness.js";

/**
 * Finding a person in the console, in Debian's Chromium against a real app on a fresh SQLite file:
 * events seeded through verify for one address (sent raw by one integration, as a hash by another)
 * among others; typing the address in the search finds exactly its events, while the address never
 * appears in a URL the page loads or navigates to; an IP finds its /24; a reason code of the
 * breakdown lists its events; the action filter offers only the tenant's actions; and a page's
 * filters stay on that page. Screenshots, narrow (760 px) and wide (1400 px), go to
 * artifacts/console/find-*.png.
 *
 * Needs the console built (node packages/console/build.mjs, part of npm run build).
 */
const SUITE = "finding a person in the console (Chromium)";
const here = path.dirname(fileURLToPath(import.meta.url));
const SHOTS = path.resolve(here, "../../../../artifacts/console");
const POLL_MS = 10_000;
const PERSON = "Pat.Doe@Example.com";
const SEARCH_LABEL = "Email, email hash, IP or network, session or event ID";

if (chromiumOrSkip(SUITE)) {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let readKey: string;
  const person: string[] = [];

  async function verify(action: string, subject: Record<string, unknown>): Promise<string> {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(readKey),
      payload: { action, subject },
    });
    expect(res.statusCode).toBe(200);
    return (res.json() as { eventId: string }).eventId;
  }

  async function api<T>(pathname: string, query: Record<string, string> = {}): Promise<T> {
    const url = new URL(pathname, base);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const res = await fetch(url, { headers: { authorization: `Bearer ${readKey}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  }

  beforeAll(async () => {
    t = await makeTestApp({ env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "1000" } });
    await t.tenant("shop", { rawPii: true });
    readKey = (await t.key("shop")).apiKey;
    const address = await t.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://localhost:${new URL(address).port}/`;
    const browserLike = { userAgent: CHROME_UA, headers: CHROME_HEADERS };
    // The person: twice with the raw address (differently cased), twice with the hash an integrator made.
    person.push(await verify("signup", { ...browserLike, email: PERSON, ipTrunc: "198.51.100.23" }));
    person.push(
      await verify("login", { ...browserLike, email: " pat.doe@example.com", ipTrunc: "198.51.100.23" }),
    );
    person.push(await verify("login", { userAgent: "curl/8.5.0", emailSha256: emailHash(PERSON) }));
    person.push(
      await verify("api_key", { userAgent: "python-requests/2.31.0", emailSha256: emailHash(PERSON) }),
    );
    for (let i = 0; i < 6; i++) {
      await verify(i % 2 ? "login" : "signup", {
        ...browserLike,
        email: `someone${i}@example.org`,
        ipTrunc: `203.0.113.${i}`,
      });
    }
    await pastTheSecond();
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A signed-in page whose every requested and visited URL is kept. */
  async function signedIn(width = 1400) {
    const urls: string[] = [];
    const signed = await signedInConsole(browser, base, readKey, width, (page) => {
      page.on("request", (r) => urls.push(r.url()));
      page.on("framenavigated", (f) => urls.push(f.url()));
    });
    return { ...signed, urls };
  }

  const shown = (page: Page) => page.getByTestId("events-table").locator("tbody th").allTextContents();
  const count = async (page: Page) => ((await page.getByTestId("events-shown").textContent()) ?? "").trim();

  async function search(page: Page, text: string) {
    await page.getByLabel(SEARCH_LABEL, { exact: true }).fill(text);
    await page.getByRole("button", { name: "Search" }).click();
  }

  async function shots(page: Page, name: string) {
    for (const width of [760, 1400]) {
      await page.setViewportSize({ width, height: 900 });
      await page.evaluate("window.scrollTo(0, 0)");
      await page.screenshot({ path: path.join(SHOTS, `find-${name}-${width}.png`), fullPage: true });
    }
  }

  describe(SUITE, () => {
    it("typing an email finds exactly its events; the address is in no URL the page loads or shows", async () => {
      const { context, page, urls, problems } = await signedIn();
      await page.goto(`${base}console/#/events`);
      await expect.poll(() => count(page), { timeout: POLL_MS }).toBe("10");
      await search(page, "  PAT.doe@example.COM ");
      await expect.poll(() => count(page), { timeout: POLL_MS }).toBe(String(person.length));
      expect(await shown(page)).toEqual([...person].reverse());
      expect(page.url()).toContain(`emailHash=${emailHash(PERSON)}`);
      expect(await page.getByLabel(SEARCH_LABEL, { exact: true }).inputValue()).toBe("");
      for (const url of urls) expect(decodeURIComponent(url).toLowerCase()).not.toContain("pat.doe");
      await shots(page, "email");
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);

    it("an IP finds the events of its /24, and only the network goes into the URL", async () => {
      const { context, page, urls } = await signedIn();
      await page.goto(`${base}console/#/events`);
      await search(page, "198.51.100.200");
      const byNetwork = await api<{ items: { eventId: string }[] }>("/v1/events", {
        network: "198.51.100.0/24",
      });
      expect(byNetwork.items.map((e) => e.eventId)).toEqual(person.slice(0, 2).reverse());
      await expect.poll(() => count(page), { timeout: POLL_MS }).toBe("2");
      expect(await shown(page)).toEqual(byNetwork.items.map((e) => e.eventId));
      for (const url of urls) expect(url).not.toContain("198.51.100.200");
      await context.close();
    }, 60_000);

    it("a reason code of the breakdown lists the events that gave it", async () => {
      const { context, page } = await signedIn();
      await page.goto(`${base}console/#/overview`);
      const reasons = await api<{ rows: { code: string; events: number }[] }>("/v1/stats/reasons");
      const rare = reasons.rows.find((r) => r.events < 10);
      expect(rare).toBeDefined();
      const code = rare?.code as string;
      const link = page.getByTestId(`reason-link-${code}`);
      await link.waitFor({ timeout: POLL_MS });
      expect(((await page.getByTestId(`reason-events-${code}`).textContent()) ?? "").trim()).toBe(
        String(rare?.events),
      );
      await shots(page, "overview-reasons");
      await link.click();
      await page.locator('main[data-route="events"]').waitFor();
      const byCode = await api<{ items: { eventId: string }[] }>("/v1/events", { reasonCode: code });
      await expect.poll(() => count(page), { timeout: POLL_MS }).toBe(String(byCode.items.length));
      expect(await shown(page)).toEqual(byCode.items.map((e) => e.eventId));
      expect(await page.getByLabel("Reason code", { exact: true }).inputValue()).toBe(code);
      await shots(page, "reason");
      await context.close();
    }, 60_000);

    it("the action filter offers the tenant's actions only, one label each, and filters by one", async () => {
      const { context, page } = await signedIn();
      await page.goto(`${base}console/#/events`);
      const action = page.getByLabel("Action", { exact: true });
      await expect
        .poll(() => action.locator("option").allTextContents(), { timeout: POLL_MS })
        .toEqual(["All actions", "api_key", "login", "signup"]);
      await action.selectOption("api_key");
      await expect.poll(() => count(page), { timeout: POLL_MS }).toBe("1");
      expect(await page.getByTestId("events-table").locator("tbody td code").first().textContent()).toBe(
        "api_key",
      );
      await context.close();
    }, 60_000);

    it("filters belong to their page: set on the events page, they are not on the overview, nor back", async () => {
      const { context, page } = await signedIn();
      await page.goto(`${base}console/#/events`);
      await page.getByLabel("Action", { exact: true }).selectOption("login");
      await page.getByLabel("Decision", { exact: true }).selectOption("allow");
      await search(page, PERSON);
      await expect.poll(() => count(page), { timeout: POLL_MS }).not.toBe("10");
      await page.getByRole("link", { name: "Overview" }).first().click();
      await page.locator('main[data-route="overview"]').waitFor();
      expect(await page.getByLabel("Action", { exact: true }).inputValue()).toBe("");
      await page.getByRole("link", { name: "Events" }).first().click();
      await page.locator('main[data-route="events"]').waitFor();
      await expect.poll(() => count(page), { timeout: POLL_MS }).toBe("10");
      expect(await page.getByLabel("Action", { exact: true }).inputValue()).toBe("");
      expect(await page.getByLabel("Decision", { exact: true }).inputValue()).toBe("");
      // The browser's Back returns to the filtered list, as its address holds the filters.
      await page.goBack();
      await page.goBack();
      await expect
        .poll(() => page.getByLabel("Decision", { exact: true }).inputValue(), { timeout: POLL_MS })
        .toBe("allow");
      await context.close();
    }, 60_000);
  });
}
