import type { Browser, BrowserContext, Page } from "playwright-core";
import { CHROMIUM_PATH, chromiumInstalled } from "../../../browser/tooling/chromium.mjs";
import { skipLoudly } from "./skip.js";

/**
 * Whether Debian's Chromium is there for a browser suite; when it is not, says so in a banner and
 * registers `suite` as skipped (never a silent pass).
 */
export function chromiumOrSkip(suite: string): boolean {
  if (chromiumInstalled()) return true;
  skipLoudly(
    suite,
    `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium): ${suite} is SKIPPED`,
  );
  return false;
}

/**
 * A console page in its own browser context, signed in with `apiKey` at `base` (the app's URL, ending
 * in "/"), at `width` px; `problems` collects page errors (a CSP violation or a script error fails a
 * test whatever the page shows); `watch` adds listeners before the page loads.
 */
export async function signedInConsole(
  browser: Browser,
  base: string,
  apiKey: string,
  width = 1360,
  watch: (page: Page, problems: string[]) => void = () => undefined,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, timezoneId: "UTC" });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  watch(page, problems);
  await page.goto(`${base}console/`);
  await page.getByLabel("API key", { exact: true }).fill(apiKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("tenant-id").waitFor();
  return { context, page, problems };
}

/**
 * Waits into the next second: the console's range ends at the second a page loads (floored), so
 * every event seeded before this call falls inside it.
 */
export const pastTheSecond = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1_100));
