// 6. Playwright forks that patch its automation tells: patchright 1.63.0 and rebrowser-playwright
// 1.52.0 (the Runtime.enable leak and friends), headless, both headless modes.
import { chromium as patchright } from "patchright";
import { chromium as rebrowser } from "rebrowser-playwright";
import { perContext, playwrightLaunch } from "../lib/browsers.mjs";

/** @returns {import("./types.mjs").ClientClass} */
const row = (id, title, chromium, mode) => ({
  id: `${id}-headless-${mode}`,
  label: `${title} headless (--headless=${mode}${mode === "old" ? "*" : ""})`,
  group: "bots",
  needs: ["chromium"],
  start: perContext({ launch: (ctx) => chromium.launch(playwrightLaunch({ mode, ctx })) }),
});

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  row("patchright", "patchright 1.63.0", patchright, "old"),
  row("patchright", "patchright 1.63.0", patchright, "new"),
  row("rebrowser", "rebrowser-playwright 1.52.0", rebrowser, "old"),
  row("rebrowser", "rebrowser-playwright 1.52.0", rebrowser, "new"),
];
