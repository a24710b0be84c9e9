import type { Page } from "playwright-core";

/**
 * A form filled in at a person's pace, as far as a headless browser can: the mouse moves to each
 * field in many small steps and clicks it, the text is typed key by key, and the submit comes at
 * least `fillMs` after the page loaded (Warden's floor for a person is 1.5 s). What the browser
 * tests of the examples use to be allowed as a person; nothing here claims Warden cannot be fooled
 * this way (docs/security-model.md).
 */
const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1));

export async function moveTo(p: Page, selector: string): Promise<void> {
  const box = await p.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not on screen`);
  const x = box.x + box.width * (0.25 + Math.random() * 0.5);
  const y = box.y + box.height * (0.3 + Math.random() * 0.4);
  await p.mouse.move(x, y, { steps: between(15, 25) });
}

export async function clickLikeAPerson(p: Page, selector: string): Promise<void> {
  await moveTo(p, selector);
  await p.waitForTimeout(between(80, 200));
  await p.mouse.down();
  await p.waitForTimeout(between(50, 120));
  await p.mouse.up();
}

/** Fills `fields` (selector → text) like a person, then clicks `submit` at least `fillMs` after `loadedAt`. */
export async function fillLikeAPerson(
  p: Page,
  fields: Record<string, string>,
  submit: string,
  loadedAt: number,
  fillMs = 2_000,
): Promise<void> {
  for (const [selector, text] of Object.entries(fields)) {
    await clickLikeAPerson(p, selector);
    await p.keyboard.type(text, { delay: between(60, 120) });
  }
  const left = loadedAt + fillMs + between(0, 400) - Date.now();
  if (left > 0) await p.waitForTimeout(left);
  await clickLikeAPerson(p, submit);
}
