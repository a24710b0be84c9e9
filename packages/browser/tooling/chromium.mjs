// Debian's Chromium for the browser tests and the solver bench, driven by playwright-core (never a
// browser download). The flags keep it from reaching for a network the machines do not have.
import fs from "node:fs";
import { chromium } from "playwright-core";

export const CHROMIUM_PATH = process.env.WARDEN_CHROMIUM ?? "/usr/bin/chromium";

export function chromiumInstalled() {
  return fs.existsSync(CHROMIUM_PATH);
}

/** `extraArgs`: e.g. --disable-blink-features=AutomationControlled (navigator.webdriver false). */
export function launchChromium(extraArgs = []) {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs,
    ],
  });
}
