// 12. Anti-detect browsers driven with care: a real headful Chromium on Xvfb running the page's own
// script, a fresh profile per signup.
// - puppeteer-real-browser (rebrowser-puppeteer-core, chrome-launcher's flags with
//   AutomationControlled disabled, ghost-cursor as page.realCursor), typing with page.type, as its
//   users do; its own Xvfb is turned off (disableXvfb) for this run's display.
// - patchright (a Playwright fork that patches its tells), headful with no viewport override, the
//   pointer on ghost-cursor's curved paths, 80-200 ms between keys, and a person's pauses
//   (lib/carefulFlow.mjs).
import fs from "node:fs";
import path from "node:path";
import { chromium } from "patchright";
import { connect } from "puppeteer-real-browser";
import { ACCEPT_TEST_CERT, playwrightLaunch } from "../lib/browsers.mjs";
import { carefulSignup } from "../lib/carefulFlow.mjs";
import { WINDOW } from "../lib/chromiumProcess.mjs";
import { CHROMIUM_PATH } from "../lib/display.mjs";
import { removeDir } from "../lib/time.mjs";

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  {
    id: "puppeteer-real-browser",
    label: "puppeteer-real-browser 1.4.4 headful (Xvfb), realCursor clicks (ghost-cursor), page.type",
    group: "bots",
    needs: ["chromium", "display"],
    async start(ctx) {
      return {
        async signup(door, identity) {
          const profile = fs.mkdtempSync(path.join(ctx.tempRoot, "real-browser-"));
          const { browser, page } = await connect({
            headless: false,
            disableXvfb: true,
            turnstile: false,
            // The door's certificate is a self-signed test one (fixtures/README.md).
            args: ["--ignore-certificate-errors", `--window-size=${WINDOW.width},${WINDOW.height}`],
            customConfig: { chromePath: CHROMIUM_PATH, userDataDir: profile, envVars: ctx.displayEnv },
            connectOption: { defaultViewport: null },
          });
          try {
            return await carefulSignup(page, `${door.url}/`, identity, {
              // page.realClick is ghost-cursor's click detached from its cursor (it loses `this` with
              // ghost-cursor 1.4): its users call it on page.realCursor.
              click: (p, selector) => p.realCursor.click(selector),
              type: (p, selector, text) => p.type(selector, text, { delay: 30 }),
            });
          } finally {
            await browser.close().catch(() => {});
            await removeDir(profile);
          }
        },
        async close() {},
      };
    },
  },
  {
    id: "patchright-careful",
    label: "patchright headful (Xvfb), curved pointer paths (ghost-cursor 1.4.2), 80-200 ms keys, pauses",
    group: "bots",
    needs: ["chromium", "display"],
    async start(ctx) {
      const browser = await chromium.launch(
        playwrightLaunch({ mode: "headful", ctx, args: [`--window-size=${WINDOW.width},${WINDOW.height}`] }),
      );
      return {
        async signup(door, identity) {
          const context = await browser.newContext({ viewport: null, ...ACCEPT_TEST_CERT });
          try {
            return await carefulSignup(await context.newPage(), `${door.url}/`, identity);
          } finally {
            await context.close();
          }
        },
        close: () => browser.close(),
      };
    },
  },
];
