import { describe, expect, it } from "vitest";
import { browserSignalsOf } from "./pageSignals.js";

describe("the page's wardenSignals field, as the gates forward it (subject.browserSignals)", () => {
  it("keeps webdriver, the known mismatch names (once each) and workerHeadless; from an object or a JSON string", () => {
    const report = {
      webdriver: false,
      mismatch: ["webgl", "platform", "webgl", "screenColour", 7],
      workerHeadless: true,
      extra: "dropped",
    };
    const kept = { webdriver: false, mismatch: ["webgl", "platform"], workerHeadless: true };
    expect(browserSignalsOf(report)).toEqual(kept);
    expect(browserSignalsOf(JSON.stringify(report))).toEqual(kept);
  });

  it("drops what it cannot read: no boolean webdriver, bad JSON, an empty or unknown mismatch list", () => {
    for (const value of [undefined, null, "nope", "{", 3, { webdriver: "yes" }, { mismatch: ["webgl"] }]) {
      expect(browserSignalsOf(value)).toBeUndefined();
    }
    expect(browserSignalsOf({ webdriver: true, mismatch: ["screenColour"], workerHeadless: "yes" })).toEqual({
      webdriver: true,
    });
  });
});
