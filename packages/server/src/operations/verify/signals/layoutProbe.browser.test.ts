import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../../../browser/tooling/chromium.mjs";
import { chromiumOrSkip } from "../../../testing/chromium.js";
import { layoutProbe } from "./layoutProbe.js";
import { environmentDigest, type PageEnvironment } from "./pageEnvironment.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const ENVIRONMENT_SOURCE = path.join(here, "../../../../../browser/src/environment.ts");

/** @warden/browser's environment.ts as a script exposing `WardenEnvironment` (the page's own code). */
async function pageScript(): Promise<string> {
  const out = await build({
    entryPoints: [ENVIRONMENT_SOURCE],
    bundle: true,
    format: "iife",
    globalName: "WardenEnvironment",
    write: false,
    target: "es2020",
  });
  return out.outputFiles[0]?.text ?? "";
}

describe.runIf(chromiumOrSkip("the layout probe in Chromium"))("the layout probe in Chromium", () => {
  let browser: Browser;
  let script: string;
  beforeAll(async () => {
    browser = await launchChromium();
    script = await pageScript();
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const scale of [1, 1.5, 2]) {
    it(`a page laid out by the engine measures what verify expects (device scale ${scale})`, async () => {
      const context = await browser.newContext({
        deviceScaleFactor: scale,
        viewport: { width: 390, height: 700 },
      });
      const page = await context.newPage();
      await page.setContent("<!doctype html><html><body><p>form</p></body></html>");
      await page.addScriptTag({ content: script });
      for (let i = 0; i < 40; i++) {
        const probe = layoutProbe(`nonce-${scale}-${i}`);
        const measured = await page.evaluate(
          (boxes) =>
            (
              globalThis as never as { WardenEnvironment: { measureProbe(p: unknown): number[] } }
            ).WardenEnvironment.measureProbe({ boxes }),
          probe.boxes as never,
        );
        expect(measured).toEqual(probe.expected);
      }
      // Nothing of the probe stays in the page.
      expect(await page.evaluate("document.body.children.length")).toBe(1);
      await context.close();
    });
  }

  it("reads the same environment twice in one browser, and its canvas without noise", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.setContent("<!doctype html><html><body></body></html>");
    await page.addScriptTag({ content: script });
    const read = () =>
      page.evaluate(
        () =>
          (
            globalThis as never as { WardenEnvironment: { readEnvironment(p: unknown): unknown } }
          ).WardenEnvironment.readEnvironment(undefined) as PageEnvironment,
      );
    const first = await read();
    const second = await read();
    expect(first.canvasNoise).toBe(false);
    expect(first.canvas).toMatch(/^[0-9a-f]+$/);
    expect(first.screen).toMatch(/^\d+x\d+$/);
    expect(first.probe).toBeUndefined();
    expect(environmentDigest(second)).toBe(environmentDigest(first));
    await context.close();
  });
});
