import { describe, expect, it } from "vitest";
import { CHROME_UA } from "../../../testing/harness.js";
import { cachedUserAgents, MAX_USER_AGENT, readUserAgent } from "./userAgent.js";

describe("the user-agent parse cache", () => {
  it("never keeps a user agent over MAX_USER_AGENT: thousands of distinct long ones leave it as it was", () => {
    readUserAgent(CHROME_UA);
    const before = cachedUserAgents();
    for (let i = 0; i < 5000; i++) {
      const sig = readUserAgent(`Mozilla/5.0 (X11; Linux x86_64) ${i} ${"x".repeat(MAX_USER_AGENT)}`);
      expect(sig.present).toBe(true);
    }
    expect(cachedUserAgents()).toBe(before);
  });

  it("keeps user agents within the cap, at most 4,096 of them", () => {
    const ua = `Mozilla/5.0 ${"y".repeat(MAX_USER_AGENT - 12)}`;
    expect(ua).toHaveLength(MAX_USER_AGENT);
    const first = readUserAgent(ua);
    expect(readUserAgent(ua)).toBe(first);
    for (let i = 0; i < 5000; i++) readUserAgent(`agent-${i}/1.0`);
    expect(cachedUserAgents()).toBe(4096);
  });
});
