import { describe, expect, it } from "vitest";
import { readScope, scopeMismatch } from "./scopeView.js";

/** A WebGL context as far as readScope reads one. */
const fakeCanvas = (renderer: string) => () => ({
  getContext: () => ({
    VENDOR: 1,
    RENDERER: 2,
    getExtension: (name: string) =>
      name === "WEBGL_debug_renderer_info" ? { UNMASKED_VENDOR_WEBGL: 3, UNMASKED_RENDERER_WEBGL: 4 } : null,
    getParameter: (p: number) => (p === 3 ? "Google Inc. (Google)" : p === 4 ? renderer : "masked"),
  }),
});
const nav = {
  userAgent:
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
  platform: "Linux x86_64",
  hardwareConcurrency: 2,
  languages: ["en-US", "en"],
  userAgentData: { brands: [{ brand: "Chromium", version: "156" }], mobile: false, platform: "Linux" },
};

describe("what the page and its worker read", () => {
  it("reads the navigator's values and the unmasked WebGL renderer", () => {
    expect(readScope(nav, fakeCanvas("SwiftShader"))).toEqual({
      userAgent: nav.userAgent,
      platform: "Linux x86_64",
      hardwareConcurrency: 2,
      languages: "en-US,en",
      userAgentData: '[["Chromium;156"],false,"Linux"]',
      webgl: "Google Inc. (Google) | SwiftShader",
    });
  });

  it("a browser's two scopes agree; a stealth patch of the page alone shows in platform, processor count and renderer", () => {
    const page = readScope(nav, fakeCanvas("SwiftShader"));
    expect(scopeMismatch(page, readScope(nav, fakeCanvas("SwiftShader")))).toEqual([]);
    const patched = readScope(
      { ...nav, platform: "Win32", hardwareConcurrency: 4 },
      fakeCanvas("Intel Iris OpenGL Engine"),
    );
    expect(scopeMismatch(patched, page)).toEqual(["platform", "hardwareConcurrency", "webgl"]);
  });

  it("a value one scope cannot read is not compared (no WebGL or no userAgentData in the worker)", () => {
    const page = readScope(nav, fakeCanvas("SwiftShader"));
    const { userAgentData: _u, ...withoutUaData } = nav;
    const worker = readScope(withoutUaData, () => undefined);
    expect(worker).toMatchObject({ webgl: null, userAgentData: null });
    expect(scopeMismatch(page, worker)).toEqual([]);
  });
});
