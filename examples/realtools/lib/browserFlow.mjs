// The signup through the real page in an automated browser (Playwright, patchright, rebrowser,
// puppeteer): open the form, fill it in, submit; if <warden-challenge> appears, press its button
// (the element issues, solves, completes and submits the form again itself) and wait for the result.
import { sleep } from "./time.mjs";

/** What the page shows: "created", "refused", "unavailable", "error", "challenge" (Verify offered) or "failed". */
const PAGE_STATE = () => {
  const result = document.querySelector("#result[data-state]");
  if (result) return result.getAttribute("data-state");
  const button = document.querySelector("warden-challenge button");
  if (button && !button.hidden) return button.textContent === "Verify" ? "challenge" : "failed";
  return "";
};

/** Polls the page's state (works with Playwright's and puppeteer's page alike). */
async function waitState(page, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const state = await page.evaluate(PAGE_STATE);
    if (state) return state;
    if (Date.now() > until) return "timeout";
    await sleep(200);
  }
}

/**
 * @param {any} page a Playwright or puppeteer page
 * @param {string} url
 * @param {{ email: string, name: string }} identity
 * @param {{ typing?: "fill" | "type" }} [opts] fill (Playwright's fill) or type (key presses; puppeteer's page.type)
 */
export async function pageSignup(page, url, identity, { typing = "fill" } = {}) {
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-ready]", { timeout: 20_000 });
  if (typing === "fill") {
    await page.fill("#email", identity.email);
    await page.fill("#name", identity.name);
  } else {
    await page.type("#email", identity.email, { delay: 30 });
    await page.type("#name", identity.name, { delay: 30 });
  }
  await page.click("#submit");
  let state = await waitState(page, 30_000);
  for (let round = 0; round < 2 && state === "challenge"; round++) {
    await page.click("warden-challenge button");
    state = await waitState(page, 90_000);
  }
  return state;
}
