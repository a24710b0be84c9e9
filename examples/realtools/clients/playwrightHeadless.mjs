// 4. Playwright (playwright-core with Debian's Chromium), headless, as it comes: the real page filled
// in, submitted, and the <warden-challenge> element's Verify pressed when it appears.
import { chromium } from "playwright-core";
import { perContext, playwrightLaunch } from "../lib/browsers.mjs";

/** @param {"old" | "new"} mode @returns {import("./types.mjs").ClientClass} */
const headless = (mode) => ({
  id: `playwright-headless-${mode}`,
  label: `Playwright 1.65.1 headless (--headless=${mode}${mode === "old" ? "*" : ""})`,
  group: "bots",
  needs: ["chromium"],
  start: perContext({ launch: (ctx) => chromium.launch(playwrightLaunch({ mode, ctx })) }),
});

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [headless("old"), headless("new")];
