import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { chromiumOrSkip, pastTheSecond, signedInConsole } from "../testing/chromium.js";
import { bearer, makeTestApp, type TestApp } from "../testing/harness.js";
import { CONSOLE_DIST } from "./assets.js";

/**
 * Resolving quarantined feedback in the console, in Debian's Chromium, on a store seeded through the
 * public API: events with effective outcomes, and two quarantined observations (abuse_confirmed after
 * converted; false_positive after credit_burn). Signed in with a key that has ledger:write, accepting
 * one on the Outcomes page and rejecting the other on its event's page change the figures the pages
 * show to what the API answers afterwards; a ledger:read key is offered no action. Screenshots, narrow
 * (760 px) and wide (1400 px), go to artifacts/console/resolve-*.png.
 *
 * Needs the console built (node packages/console/build.mjs, part of npm run build).
 */
const SUITE = "resolving quarantined feedback in the console";

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, "../../../..");
const CONSOLE_INDEX = path.join(CONSOLE_DIST, "index.html");
const SHOTS = path.join(REPO, "artifacts/console");
const POLL_MS = 10_000;

type Json = Record<string, unknown>;
interface Obs {
  feedbackId: string;
  outcome: string;
  status: string;
}

if (chromiumOrSkip(SUITE)) {
  describe(SUITE, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let reviewer: string;
    let reviewerId: string;
    let reader: string;
    /** The event whose abuse_confirmed is quarantined against converted, and its two observations. */
    const abuse = { eventId: "", decision: "", converted: "", quarantined: "" };
    /** The event whose false_positive is quarantined against credit_burn. */
    const burn = { eventId: "", burn: "", quarantined: "" };

    const post = async (url: string, payload: Json) => {
      const res = await t.app.inject({ method: "POST", url, headers: bearer(reviewer), payload });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Json;
    };
    const api = async <T = Json>(url: string): Promise<T> => {
      const res = await t.app.inject({ method: "GET", url, headers: bearer(reviewer) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as T;
    };
    const observations = async (eventId: string) =>
      (await api<{ observations: Obs[] }>(`/v1/events/${eventId}`)).observations;
    const outcomeStats = () =>
      api<{ rows: { decision: string; outcome: string; events: number }[]; quarantinedCount: number }>(
        "/v1/stats/outcomes",
      );
    const cellOf = (stats: Awaited<ReturnType<typeof outcomeStats>>, decision: string, outcome: string) =>
      String(stats.rows.find((r) => r.decision === decision && r.outcome === outcome)?.events ?? 0);

    beforeAll(async () => {
      if (!fs.existsSync(CONSOLE_INDEX)) {
        throw new Error(
          `${CONSOLE_INDEX} is missing: build the console first (node packages/console/build.mjs)`,
        );
      }
      t = await makeTestApp({ env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "1000" } });
      await t.tenant("shop");
      ({ apiKey: reviewer, keyId: reviewerId } = await t.key("shop"));
      reader = (await t.key("shop", { scopes: ["ledger:read"] })).apiKey;
      const address = await t.app.listen({ host: "127.0.0.1", port: 0 });
      base = `http://localhost:${new URL(address).port}/`;

      const events: string[] = [];
      for (let i = 0; i < 8; i++) {
        events.push(
          (await post("/v1/verify", { action: "signup", session: `s-${i}`, subject: {} })).eventId as string,
        );
      }
      const [e0 = "", e1 = "", ...rest] = events;
      for (const id of rest.slice(0, 3)) await post("/v1/feedback", { eventId: id, outcome: "converted" });
      for (const id of rest.slice(3)) await post("/v1/feedback", { eventId: id, outcome: "abuse_confirmed" });
      await post("/v1/feedback", {
        eventId: e0,
        outcome: "converted",
        value: 15,
        unit: "usd",
        source: "billing",
      });
      await post("/v1/feedback", { eventId: e0, outcome: "abuse_confirmed", source: "trust_queue" });
      await post("/v1/feedback", { eventId: e1, outcome: "credit_burn", value: 40, unit: "usd" });
      await post("/v1/feedback", { eventId: e1, outcome: "false_positive", source: "manual_review" });
      const [conv, abused] = await observations(e0);
      const [burned, fp] = await observations(e1);
      expect([abused?.status, fp?.status]).toEqual(["quarantined", "quarantined"]);
      Object.assign(abuse, {
        eventId: e0,
        decision: (await api<{ event: { wouldBeDecision: string } }>(`/v1/events/${e0}`)).event
          .wouldBeDecision,
        converted: conv?.feedbackId,
        quarantined: abused?.feedbackId,
      });
      Object.assign(burn, { eventId: e1, burn: burned?.feedbackId, quarantined: fp?.feedbackId });
      await pastTheSecond();
      fs.mkdirSync(SHOTS, { recursive: true });
      browser = await launchChromium();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await t?.close();
    });

    const signedIn = (apiKey: string, width: number) =>
      signedInConsole(browser, base, apiKey, width, (page, problems) =>
        // The session probe before signing in is a 401 by design.
        page.on("console", (m) => {
          if (m.type() === "error" && !/status of 401/.test(m.text())) problems.push(m.text());
        }),
      );
    async function open(page: Page, hash: string, route: string) {
      await page.goto(`${base}console/${hash}`);
      await page.locator(`main[data-route="${route}"]`).waitFor();
      await expect.poll(() => page.locator(".status .loading").count(), { timeout: POLL_MS }).toBe(0);
    }
    const text = async (page: Page, testId: string) =>
      ((await page.getByTestId(testId).first().textContent()) ?? "").trim();
    /** The whole page; a dialog (in the top layer, over the viewport) as the viewport shows it. */
    const shot = async (page: Page, name: string, fullPage = true) => {
      if (fullPage) await page.evaluate("window.scrollTo(0, 0)");
      await page.screenshot({ path: path.join(SHOTS, `resolve-${name}.png`), fullPage });
    };

    it("a ledger:read session is offered no action and says what resolving needs", async () => {
      const { context, page, problems } = await signedIn(reader, 1400);
      await open(page, "#/outcomes", "outcomes");
      await page.getByTestId("quarantined-table").waitFor();
      expect(await text(page, "resolve-needs-scope")).toMatch(/ledger:write/);
      expect(await page.getByTestId(`resolve-accept-${abuse.quarantined}`).count()).toBe(0);
      expect(problems).toEqual([]);
      await context.close();
    });

    it("outcomes: accepting a quarantined observation after confirming changes the matrix and the quarantined count to the API's new figures", async () => {
      const before = await outcomeStats();
      expect(before.quarantinedCount).toBe(2);
      const { context, page, problems } = await signedIn(reviewer, 1400);
      await open(page, "#/outcomes", "outcomes");
      await page.getByTestId("quarantined-table").waitFor();
      expect(await text(page, "quarantined-count")).toBe("2");
      const cell = (o: string) => text(page, `outcome-${abuse.decision}-${o}`);
      expect(await cell("abuse_confirmed")).toBe(cellOf(before, abuse.decision, "abuse_confirmed"));
      expect(await cell("converted")).toBe(cellOf(before, abuse.decision, "converted"));

      // Cancelling the confirmation changes nothing.
      await page.getByTestId(`resolve-reject-${abuse.quarantined}`).click();
      const dialog = page.getByTestId("resolve-dialog").and(page.locator("[open]"));
      await dialog.waitFor();
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden" });
      expect((await observations(abuse.eventId)).map((o) => o.status)).toEqual(["effective", "quarantined"]);

      await page.getByTestId(`resolve-accept-${abuse.quarantined}`).click();
      await dialog.waitFor();
      const said = (await dialog.textContent()) ?? "";
      expect(said).toContain("It counts toward the totals");
      expect(said).toContain(abuse.converted);
      await dialog
        .getByLabel("Note (optional, kept with the record)")
        .fill("chargeback confirmed by the bank");
      await shot(page, "outcomes-confirm-wide", false);
      await dialog.getByTestId("resolve-confirm").click();

      const note = page.getByTestId(`resolution-${abuse.quarantined}`);
      await note.waitFor({ timeout: POLL_MS });
      expect(await note.textContent()).toMatch(new RegExp(`Accepted by ${reviewerId}.*chargeback confirmed`));
      const after = await outcomeStats();
      expect(after.quarantinedCount).toBe(1);
      expect(cellOf(after, abuse.decision, "abuse_confirmed")).toBe(
        String(Number(cellOf(before, abuse.decision, "abuse_confirmed")) + 1),
      );
      expect(cellOf(after, abuse.decision, "converted")).toBe(
        String(Number(cellOf(before, abuse.decision, "converted")) - 1),
      );
      await expect.poll(() => text(page, "quarantined-count"), { timeout: POLL_MS }).toBe("1");
      await expect
        .poll(() => cell("abuse_confirmed"), { timeout: POLL_MS })
        .toBe(cellOf(after, abuse.decision, "abuse_confirmed"));
      expect(await cell("converted")).toBe(cellOf(after, abuse.decision, "converted"));
      expect((await observations(abuse.eventId)).map((o) => o.status)).toEqual(["superseded", "effective"]);
      await shot(page, "outcomes-wide");
      await page.setViewportSize({ width: 760, height: 900 });
      await shot(page, "outcomes-narrow");
      expect(problems).toEqual([]);
      await context.close();
    }, 90_000);

    it("event page: rejecting its quarantined observation shows who and when, and the ledger total stays", async () => {
      const ledgerBefore = await api<{ ledgerUsdTotal: number }>("/v1/ledger/summary");
      const { context, page, problems } = await signedIn(reviewer, 760);
      await open(page, `#/events/${burn.eventId}`, `event:${burn.eventId}`);
      await page.getByTestId("event-observations-table").waitFor();
      expect(await text(page, `observation-status-${burn.quarantined}`)).toBe("quarantined");
      await page.getByTestId(`resolve-reject-${burn.quarantined}`).click();
      const dialog = page.getByTestId("resolve-dialog").and(page.locator("[open]"));
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain("It never counts");
      await shot(page, "event-confirm-narrow", false);
      await dialog.getByTestId("resolve-confirm").click();
      await expect
        .poll(() => text(page, `observation-status-${burn.quarantined}`), { timeout: POLL_MS })
        .toBe("rejected");
      expect(await text(page, `observation-resolution-${burn.quarantined}`)).toMatch(
        new RegExp(`Rejected by ${reviewerId}`),
      );
      expect(await text(page, `observation-status-${burn.burn}`)).toBe("effective");
      expect((await api<{ ledgerUsdTotal: number }>("/v1/ledger/summary")).ledgerUsdTotal).toBe(
        ledgerBefore.ledgerUsdTotal,
      );
      await shot(page, "event-narrow");
      await page.setViewportSize({ width: 1400, height: 900 });
      await shot(page, "event-wide");

      // The event accepted on Outcomes shows the superseded observation and what superseded it.
      await open(page, `#/events/${abuse.eventId}`, `event:${abuse.eventId}`);
      await page.getByTestId("event-observations-table").waitFor();
      expect(await text(page, `observation-status-${abuse.converted}`)).toBe("superseded");
      expect(await text(page, `observation-resolution-${abuse.converted}`)).toContain(abuse.quarantined);
      expect(await text(page, `observation-resolution-${abuse.quarantined}`)).toMatch(/Accepted by/);
      // Nothing is left to resolve.
      await open(page, "#/outcomes", "outcomes");
      await expect.poll(() => text(page, "quarantined-count"), { timeout: POLL_MS }).toBe("0");
      expect(problems).toEqual([]);
      await context.close();
    }, 90_000);
  });
}
