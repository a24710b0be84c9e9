// 5. Playwright headless with a person's Chrome user agent on the command line (so the page, its
// workers and the headers all carry it) and without the automation flag
// (--disable-blink-features=AutomationControlled: navigator.webdriver false).
import { chromium } from "playwright-core";
import { perContext, personUserAgent, playwrightLaunch } from "../lib/browsers.mjs";

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  {
    id: "playwright-ua-no-automation",
    label: "Playwright headless, --user-agent=Chrome + AutomationControlled off",
    group: "bots",
    needs: ["chromium"],
    start: perContext({
      launch: (ctx) =>
        chromium.launch(
          playwrightLaunch({
            mode: "new",
            ctx,
            args: [`--user-agent=${personUserAgent()}`, "--disable-blink-features=AutomationControlled"],
          }),
        ),
    }),
  },
];
