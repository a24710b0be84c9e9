// 9. The stealth kits: Playwright with a spoofed user agent and locale (context options, i.e. the
// DevTools protocol); puppeteer-extra with puppeteer-extra-plugin-stealth on puppeteer-core (headless
// old, new, and headful on Xvfb), typing with page.type as its users do; Playwright with
// fingerprint-injector (a generated Chrome fingerprint injected into a new context).
import { newInjectedContext } from "fingerprint-injector";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-extra";
import StealthPlugin from "puppeteer-extra-plugin-stealth";
import { pageSignup } from "../lib/browserFlow.mjs";
import { ACCEPT_TEST_CERT, perContext, personUserAgent, playwrightLaunch } from "../lib/browsers.mjs";
import { sandboxArgs } from "../lib/chromiumProcess.mjs";
import { CHROMIUM_PATH } from "../lib/display.mjs";

puppeteer.use(StealthPlugin());

/** @param {"old" | "new" | "headful"} mode @returns {import("./types.mjs").ClientClass} */
const stealth = (mode) => ({
  id: `puppeteer-stealth-${mode === "headful" ? "headful" : `headless-${mode}`}`,
  label: `puppeteer-extra 3.3.6 + stealth 2.11.2 (puppeteer-core 24.43.1), ${
    mode === "headful" ? "headful (Xvfb)" : `headless ${mode === "old" ? "shell*" : "new"}`
  }`,
  group: "bots",
  needs: mode === "headful" ? ["chromium", "display"] : ["chromium"],
  async start(ctx) {
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM_PATH,
      // puppeteer's names: "shell" passes --headless (the old mode's flag), true passes --headless=new.
      headless: mode === "old" ? "shell" : mode === "new",
      // The door's self-signed test certificate (fixtures/README.md).
      acceptInsecureCerts: true,
      args: sandboxArgs(),
      env: mode === "headful" ? ctx.displayEnv : ctx.browserEnv,
    });
    return {
      async signup(door, identity) {
        const context = await browser.createBrowserContext();
        try {
          return await pageSignup(await context.newPage(), `${door.url}/`, identity, { typing: "type" });
        } finally {
          await context.close();
        }
      },
      close: () => browser.close(),
    };
  },
});

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  {
    id: "playwright-ua-locale",
    label: "Playwright headless, userAgent=Chrome + locale en-US (context)",
    group: "bots",
    needs: ["chromium"],
    start: perContext({
      launch: (ctx) => chromium.launch(playwrightLaunch({ mode: "new", ctx })),
      context: (browser) =>
        browser.newContext({ userAgent: personUserAgent(), locale: "en-US", ...ACCEPT_TEST_CERT }),
    }),
  },
  stealth("old"),
  stealth("new"),
  stealth("headful"),
  {
    id: "playwright-fingerprint-injector",
    label: "Playwright headless + fingerprint-injector 2.1.88 (newInjectedContext)",
    group: "bots",
    needs: ["chromium"],
    start: perContext({
      launch: (ctx) => chromium.launch(playwrightLaunch({ mode: "new", ctx })),
      context: (browser) =>
        newInjectedContext(browser, {
          fingerprintOptions: { devices: ["desktop"], operatingSystems: ["windows"], browsers: ["chrome"] },
          newContextOptions: ACCEPT_TEST_CERT,
        }),
    }),
  },
];
