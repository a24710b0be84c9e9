import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../browser/tooling/chromium.mjs";
import { environmentDigest } from "../operations/verify/signals/pageEnvironment.js";
import { chromiumOrSkip, pastTheSecond, signedInConsole } from "../testing/chromium.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../testing/harness.js";
import { CONSOLE_DIST } from "./assets.js";

/**
 * The Campaigns page in Debian's Chromium, on a store seeded through the public API: 12 signups of
 * one page environment from 12 networks, 4 reported abuse_confirmed. The page shows the environment
 * shared by the 4 with the 8 unlabelled; Deny… shows the rule's what-if before its confirmation, and
 * confirming stores the policy's next version, which the page shows; a verify with the environment is
 * then denied. A ledger:read session is offered no action. Screenshots go to
 * artifacts/console/campaigns-*.png.
 *
 * Needs the console built (node packages/console/build.mjs, part of npm run build).
 */
const SUITE = "the console's campaigns";

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, "../../../..");
const CONSOLE_INDEX = path.join(CONSOLE_DIST, "index.html");
const SHOTS = path.join(REPO, "artifacts/console");
const POLL_MS = 10_000;

const DEVICE = {
  screen: "1366x768",
  colorDepth: 24,
  pixelRatio: 1,
  cores: 4,
  memory: 8,
  touchPoints: 0,
  timezone: "America/New_York",
  languages: "en-US,en",
  platform: "Win32",
  renderer: "ANGLE (Intel, Intel(R) UHD Graphics 620 Direct3D11 vs_5_0 ps_5_0, D3D11)",
  canvas: "9f8e7d6c5b",
  canvasNoise: false,
};
const DIGEST = environmentDigest(DEVICE) as string;

if (chromiumOrSkip(SUITE)) {
  describe(SUITE, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let operator: string;
    let reader: string;
    let writer: string;

    const verify = async (n: number) => {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(writer),
        payload: {
          action: "signup",
          session: `s-${n}`,
          subject: {
            userAgent: CHROME_UA,
            ipTrunc: `192.0.${n}.0/24`,
            headers: CHROME_HEADERS,
            page: { environment: DEVICE },
          },
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { eventId: string; decision: string; reasonDetails: { code: string }[] };
    };

    beforeAll(async () => {
      if (!fs.existsSync(CONSOLE_INDEX)) {
        throw new Error(
          `${CONSOLE_INDEX} is missing: build the console first (node packages/console/build.mjs)`,
        );
      }
      t = await makeTestApp({ env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "1000" } });
      await t.tenant("shop");
      writer = (await t.key("shop", { scopes: ["verify:write", "feedback:write"] })).apiKey;
      operator = (await t.key("shop", { scopes: ["ledger:read", "policy:write"] })).apiKey;
      reader = (await t.key("shop", { scopes: ["ledger:read"] })).apiKey;
      const address = await t.app.listen({ host: "127.0.0.1", port: 0 });
      base = `http://localhost:${new URL(address).port}/`;
      const events = [];
      for (let n = 0; n < 12; n++) events.push(await verify(n));
      for (const e of events.slice(0, 4)) {
        const res = await t.app.inject({
          method: "POST",
          url: "/v1/feedback",
          headers: bearer(writer),
          payload: { eventId: e.eventId, outcome: "abuse_confirmed" },
        });
        expect(res.statusCode).toBe(200);
      }
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
        page.on("console", (m) => {
          if (m.type() === "error" && !/status of 401/.test(m.text())) problems.push(m.text());
        }),
      );
    async function open(page: Page) {
      await page.goto(`${base}console/#/campaigns`);
      await page.locator('main[data-route="campaigns"]').waitFor();
      await expect.poll(() => page.locator(".status .loading").count(), { timeout: POLL_MS }).toBe(0);
      await page.getByTestId("campaigns-table").waitFor();
    }
    const text = async (page: Page, testId: string) =>
      ((await page.getByTestId(testId).first().textContent()) ?? "").trim();
    const shot = async (page: Page, name: string, fullPage = true) => {
      if (fullPage) await page.evaluate("window.scrollTo(0, 0)");
      await page.screenshot({ path: path.join(SHOTS, `campaigns-${name}.png`), fullPage });
    };

    it("a ledger:read session sees the campaign and is offered no rule", async () => {
      const { context, page, problems } = await signedIn(reader, 1400);
      await open(page);
      expect(await text(page, "labelled-environment")).toBe("4");
      expect(await text(page, "unlabelled-environment")).toBe("8");
      expect(await text(page, "deny-needs-scope")).toMatch(/policy:write/);
      expect(await page.getByTestId("deny-environment").count()).toBe(0);
      expect(problems).toEqual([]);
      await context.close();
    });

    it("Deny… shows the rule's what-if before its confirmation; confirming stores the next policy version, shown, and verify denies the environment", async () => {
      const { context, page, problems } = await signedIn(operator, 1400);
      await open(page);
      const row = page.getByRole("row").filter({ hasText: DIGEST });
      expect(await row.count()).toBe(1);
      expect(await text(page, "labelled-environment")).toBe("4");
      expect(await text(page, "unlabelled-environment")).toBe("8");
      await shot(page, "wide");

      await page.getByTestId("deny-environment").click();
      const dialog = page.getByTestId("deny-dialog").and(page.locator("[open]"));
      await dialog.waitFor();
      await dialog.getByTestId("deny-what-if").waitFor({ timeout: POLL_MS });
      expect(await text(page, "what-if-events")).toBe("12");
      expect(await text(page, "what-if-abusive")).toBe("4");
      expect(await text(page, "what-if-unlabelled")).toBe("8");
      expect(await dialog.textContent()).toContain("The policy is now default");
      await shot(page, "confirm", false);
      // Nothing is stored before the confirmation.
      expect(await t.store.policies.current("shop")).toBeUndefined();

      await dialog.getByTestId("deny-confirm").click();
      await page.getByTestId("deny-applied").waitFor({ timeout: POLL_MS });
      expect(await text(page, "policy-version")).toBe("v1");
      await page.getByTestId("listed-environment").waitFor({ timeout: POLL_MS });
      expect(JSON.parse((await t.store.policies.current("shop"))?.document ?? "{}")).toEqual({
        deny: { environments: [DIGEST] },
      });
      const next = await verify(99);
      expect(next.decision).toBe("deny");
      expect(next.reasonDetails[0]?.code).toBe("tenant_deny_list");
      await shot(page, "applied");
      await page.setViewportSize({ width: 760, height: 900 });
      await shot(page, "narrow");
      expect(problems).toEqual([]);
      await context.close();
    });
  });
}
