// Launch settings shared by the automated-browser classes: Debian's Chromium always (never a browser
// download), the flags each tool's users pass, and a person's user agent for the classes that spoof one.
import { execFileSync } from "node:child_process";
import { pageSignup } from "./browserFlow.mjs";
import { sandboxArgs } from "./chromiumProcess.mjs";
import { CHROMIUM_PATH } from "./display.mjs";

let major;
/** The installed Chromium's major version (156 for Debian's 156.0.8078.108). */
export function chromiumMajor() {
  major ??= Number(/(\d+)\./.exec(execFileSync(CHROMIUM_PATH, ["--version"]).toString())?.[1] ?? 0);
  return major;
}

/** The user agent a person's Chrome on Linux of the same version sends (what a careful bot copies). */
export const personUserAgent = () =>
  `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${chromiumMajor()}.0.0.0 Safari/537.36`;

/**
 * Headless modes as the tools name them. Chromium 156 has no old headless mode any more (it is the
 * separate chrome-headless-shell binary since Chromium 132): "--headless=old" starts the new one.
 */
export const HEADLESS_FLAGS = { old: "--headless=old", new: "--headless=new" };

/**
 * Options for a Playwright-API launch (playwright-core, patchright, rebrowser-playwright): the run's
 * browser environment (HOME and XDG directories in its temp dir; DISPLAY when headful).
 * @param {{ mode: "old" | "new" | "headful", args?: string[], ctx: import("../clients/types.mjs").RunContext }} o
 */
export function playwrightLaunch({ mode, args = [], ctx }) {
  return {
    executablePath: CHROMIUM_PATH,
    headless: mode !== "headful",
    args: [...sandboxArgs(), ...(mode === "headful" ? [] : [HEADLESS_FLAGS[mode]]), ...args],
    env: mode === "headful" ? ctx.displayEnv : ctx.browserEnv,
  };
}

/**
 * Context options every Playwright-API client adds: the door's certificate is a self-signed test one
 * (fixtures/README.md). Nothing else about the browser's TLS changes.
 */
export const ACCEPT_TEST_CERT = Object.freeze({ ignoreHTTPSErrors: true });

/**
 * A client class over one launched Playwright-API browser: a fresh context per signup (with
 * ACCEPT_TEST_CERT; a `context` of the class's own must add it).
 * @param {{ launch: (ctx: import("../clients/types.mjs").RunContext) => Promise<any>, context?: (browser: any) => Promise<any> }} o
 * @returns {(ctx: import("../clients/types.mjs").RunContext) => Promise<import("../clients/types.mjs").RunningClient>}
 */
export function perContext({ launch, context = (browser) => browser.newContext(ACCEPT_TEST_CERT) }) {
  return async (ctx) => {
    const browser = await launch(ctx);
    return {
      async signup(door, identity) {
        const c = await context(browser);
        try {
          return await pageSignup(await c.newPage(), `${door.url}/`, identity);
        } finally {
          await c.close();
        }
      },
      close: () => browser.close(),
    };
  };
}
