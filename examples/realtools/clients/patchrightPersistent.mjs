// 8. patchright as its authors recommend it: headful (Xvfb), a persistent profile
// (launchPersistentContext), no viewport override, no user agent of its own. A new tab per signup.
import fs from "node:fs";
import path from "node:path";
import { chromium } from "patchright";
import { pageSignup } from "../lib/browserFlow.mjs";
import { ACCEPT_TEST_CERT, playwrightLaunch } from "../lib/browsers.mjs";
import { removeDir } from "../lib/time.mjs";

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  {
    id: "patchright-headful-persistent",
    label: "patchright headful (Xvfb), persistent profile",
    group: "bots",
    needs: ["chromium", "display"],
    async start(ctx) {
      const profile = fs.mkdtempSync(path.join(ctx.tempRoot, "patchright-profile-"));
      const context = await chromium.launchPersistentContext(profile, {
        ...playwrightLaunch({ mode: "headful", ctx }),
        viewport: null,
        ...ACCEPT_TEST_CERT,
      });
      return {
        async signup(door, identity) {
          const page = await context.newPage();
          try {
            return await pageSignup(page, `${door.url}/`, identity);
          } finally {
            await page.close();
          }
        },
        async close() {
          await context.close();
          await removeDir(profile);
        },
      };
    },
  },
];
