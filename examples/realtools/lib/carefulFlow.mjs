// The signup through the real page as a careful automation user drives it (works with Playwright's
// and puppeteer's page alike): the pointer travels on ghost-cursor's curved, overshooting paths
// (its `path`, Bezier curves with Fitts's-law speed) between the fields and buttons, presses go down
// and up a moment apart, every key follows the last after 80-200 ms, and the person-like pauses
// before typing, between the fields and before submitting are kept.
import { path as ghostPath } from "ghost-cursor";
import { sleep } from "./time.mjs";
import { between } from "./xdotool.mjs";

/** Where the pointer is, per page (a page starts with it somewhere in the window, as a person's does). */
const pointers = new WeakMap();

/** A point inside an element's box, away from its edges. */
async function pointIn(page, selector) {
  const handle = await page.waitForSelector(selector, { timeout: 20_000 });
  const box = await handle.boundingBox();
  if (!box) throw new Error(`${selector} has no box`);
  return {
    x: box.x + box.width * (0.25 + Math.random() * 0.5),
    y: box.y + box.height * (0.3 + Math.random() * 0.4),
  };
}

/** Moves the pointer to `selector` along a curved path and clicks it. */
export async function humanClick(page, selector) {
  const to = await pointIn(page, selector);
  const from = pointers.get(page) ?? { x: between(200, 900), y: between(150, 600) };
  for (const p of ghostPath(from, to)) {
    await page.mouse.move(p.x, p.y);
    await sleep(between(6, 18));
  }
  pointers.set(page, to);
  await sleep(between(60, 180));
  await page.mouse.down();
  await sleep(between(50, 120));
  await page.mouse.up();
}

/** Types `text` one key at a time, 80-200 ms apart. */
export async function humanType(page, text) {
  for (const ch of text) {
    await page.keyboard.type(ch);
    await sleep(between(80, 200));
  }
}

/** What the page shows (as lib/browserFlow.mjs reads it). */
const PAGE_STATE = () => {
  const result = document.querySelector("#result[data-state]");
  if (result) return result.getAttribute("data-state");
  const button = document.querySelector("warden-challenge button");
  if (button && !button.hidden) return button.textContent === "Verify" ? "challenge" : "failed";
  return "";
};

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
 * @param {{ click?: (page: any, selector: string) => Promise<void>, type?: (page: any, selector: string, text: string) => Promise<void> }} [how]
 *   a tool's own click and typing (puppeteer-real-browser's realClick and page.type); by default the
 *   curved pointer paths and 80-200 ms keys above
 */
export async function carefulSignup(page, url, identity, how = {}) {
  const click = how.click ?? humanClick;
  const type = how.type ?? ((p, _selector, text) => humanType(p, text));
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-ready]", { timeout: 20_000 });
  await sleep(between(1000, 2500));
  await click(page, "#email");
  await type(page, "#email", identity.email);
  await sleep(between(300, 900));
  await click(page, "#name");
  await type(page, "#name", identity.name);
  await sleep(between(500, 1500));
  await click(page, "#submit");
  let state = await waitState(page, 30_000);
  for (let round = 0; round < 2 && state === "challenge"; round++) {
    await sleep(between(800, 2000));
    await click(page, "warden-challenge button");
    state = await waitState(page, 90_000);
  }
  return state;
}
