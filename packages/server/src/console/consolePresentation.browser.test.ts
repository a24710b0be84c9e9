import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { policySetCommand } from "../../../console/src/cliCommands.js";
import { runCli } from "../cli/main.js";
import { chromiumOrSkip } from "../testing/chromium.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../testing/harness.js";

/**
 * What the console presents, in Debian's Chromium against a real app on a fresh SQLite file: the top
 * bar fits a 760 px window as well as a 1400 px one (every page link and Sign out on screen, nothing
 * scrolls sideways), screenshots of both under artifacts/console/; an event a tenant's deny list
 * decided says so and presents neither an actor type nor a confidence as the decision's; and the
 * what-if page prints a `warden policy set` command that, run as printed against the app's own store
 * with the JSON the page shows, stores that policy.
 *
 * Needs the console built (node packages/console/build.mjs, part of npm run build).
 */
const SUITE = "what the operator console presents, in Chromium";

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, "../../../..");
const SHOTS = path.join(REPO, "artifacts/console");
/** A tenant id as long as a real one can be: the top bar must hold it too. */
const TENANT = "acme-marketplace-europe-west";

if (chromiumOrSkip(SUITE)) {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let readKey: string;
  let listedEvent: string;

  beforeAll(async () => {
    t = await makeTestApp({ env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "1000" } });
    await t.tenant(TENANT);
    await t.store.policies.put(
      TENANT,
      JSON.stringify({ deny: { networks: ["203.0.113.0/24"] } }),
      Date.now(),
    );
    readKey = (await t.key(TENANT)).apiKey;
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(readKey),
      payload: {
        action: "signup",
        subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "203.0.113.0/24" },
      },
    });
    const verdict = res.json() as { decision: string; actorType: string; eventId: string };
    // The model reads a person's browser; the tenant's list denies it.
    expect(verdict).toMatchObject({ decision: "deny", actorType: "human" });
    listedEvent = verdict.eventId;
    const address = await t.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://localhost:${new URL(address).port}/`;
    fs.mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signedIn(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 800 }, timezoneId: "UTC" });
    const page = await context.newPage();
    await page.goto(`${base}console/`);
    await page.getByLabel("API key", { exact: true }).fill(readKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("tenant-id").waitFor();
    return page;
  }

  const text = async (page: Page, testId: string) =>
    ((await page.getByTestId(testId).textContent()) ?? "").trim();

  describe(SUITE, () => {
    for (const width of [760, 1400]) {
      it(`at ${width} px the top bar fits: every page link and Sign out on screen, no sideways scroll`, async () => {
        const page = await signedIn(width);
        try {
          const signOut = page.getByRole("button", { name: "Sign out" });
          const controls = [signOut, ...(await page.getByRole("navigation").getByRole("link").all())];
          // Six pages (overview, events, outcomes, calibration, what-if, campaigns) and Sign out.
          expect(controls).toHaveLength(7);
          for (const control of controls) {
            const name = (await control.textContent()) ?? "";
            const box = await control.boundingBox();
            expect(box, name).not.toBeNull();
            expect(box?.x, name).toBeGreaterThanOrEqual(0);
            expect((box?.x ?? 0) + (box?.width ?? 0), name).toBeLessThanOrEqual(width);
          }
          expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(width);
          expect(await page.getByTestId("tenant-id").getAttribute("title")).toBe(TENANT);
          await page.screenshot({ path: path.join(SHOTS, `header-${width}.png`) });
        } finally {
          await page.context().close();
        }
      });
    }

    it("an event the tenant's deny list decided says a tenant rule decided, with no actor or confidence presented as the decision's", async () => {
      const page = await signedIn(1400);
      try {
        await page.goto(`${base}console/#/events/${listedEvent}`);
        await page.getByTestId("event-decided-by").waitFor();
        expect(await text(page, "event-decision")).toBe("deny");
        expect(await text(page, "event-decided-by")).toMatch(/^a tenant rule/);
        expect(await text(page, "event-actor-type")).toBe(
          "human, as the model read the evidence (the rule decided, not the model)",
        );
        expect(await text(page, "event-confidence")).toBe("none: a tenant rule decided, not the model");
        await page.screenshot({ path: path.join(SHOTS, "event-deny-list.png"), fullPage: true });
      } finally {
        await page.context().close();
      }
    });

    it("the what-if page's command, run as printed with the JSON it shows, stores that policy", async () => {
      const page = await signedIn(1400);
      try {
        await page.goto(`${base}console/#/what-if`);
        const printed = await text(page, "policy-command");
        expect(printed).toBe(policySetCommand(TENANT));
        await page.getByRole("button", { name: "Show policy JSON" }).click();
        const shown = JSON.parse(await text(page, "policy-json")) as Record<string, unknown>;
        expect(shown).toHaveProperty("decisionCosts");
        // As an operator would: the JSON saved as policy.json in the working directory, the command pasted.
        const dir = fs.mkdtempSync(path.join(t.dbFile, "..", "whatif-"));
        fs.writeFileSync(path.join(dir, "policy.json"), JSON.stringify(shown));
        const errors: string[] = [];
        const cwd = process.cwd();
        process.chdir(dir);
        let code: number;
        try {
          code = await runCli(
            printed.split(/\s+/).slice(1),
            { out: () => undefined, err: (l) => errors.push(l) },
            { ...process.env, WARDEN_DATABASE_URL: `sqlite:${t.dbFile}`, WARDEN_LOG_LEVEL: "silent" },
          );
        } finally {
          process.chdir(cwd);
        }
        expect(code, errors.join("\n")).toBe(0);
        const current = await t.store.policies.current(TENANT);
        expect(JSON.parse(current?.document ?? "{}")).toEqual(shown);
      } finally {
        await page.context().close();
      }
    });
  });
}
