/**
 * What the page can tell Warden about its own browser, for the form to carry to your server (field
 * `wardenSignals`), which forwards it as `subject.browserSignals`. Only what incriminates counts (a
 * page under a bot's control can report anything): navigator.webdriver is true in a browser driven
 * through WebDriver or the DevTools protocol with the stock automation flags.
 */
export interface BrowserSignals {
  webdriver: boolean;
}

export function collectSignals(): BrowserSignals {
  return { webdriver: typeof navigator !== "undefined" && navigator.webdriver === true };
}
