import { describe, expect, it } from "vitest";
import { browserSignalsOf, pageReportOf } from "./pageSignals.js";

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

describe("the page's wardenPage field, as the gates forward it (subject.page)", () => {
  it("keeps the token and the known counts that are whole numbers within Warden's caps; from an object or a JSON string", () => {
    const report = {
      token: "wpt1.k.p.m",
      behaviour: {
        keys: 12,
        inserted: 0,
        pointerMoves: 40.5,
        clicks: -1,
        touches: 1e12,
        untrusted: "3",
        extra: 1,
      },
      more: true,
    };
    const kept = { token: "wpt1.k.p.m", behaviour: { keys: 12, inserted: 0 } };
    expect(pageReportOf(report)).toEqual(kept);
    expect(pageReportOf(JSON.stringify(report))).toEqual(kept);
  });

  it("drops a report without a usable token: missing, empty, not a string, over 512 characters", () => {
    for (const value of [undefined, null, "{", {}, { token: "" }, { token: 5 }, { token: "x".repeat(513) }]) {
      expect(pageReportOf(value)).toBeUndefined();
    }
    expect(pageReportOf({ token: "t" })).toEqual({ token: "t" });
  });
});
