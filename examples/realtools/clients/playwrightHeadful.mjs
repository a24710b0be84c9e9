// 7. Playwright headful: a real Chromium window on this run's Xvfb display, driven over the DevTools
// protocol as Playwright does by default.
import { chromium } from "playwright-core";
import { perContext, playwrightLaunch } from "../lib/browsers.mjs";

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  {
    id: "playwright-headful",
    label: "Playwright headful (Xvfb)",
    group: "bots",
    needs: ["chromium", "display"],
    start: perContext({
      launch: (ctx) => chromium.launch(playwrightLaunch({ mode: "headful", ctx })),
    }),
  },
];
