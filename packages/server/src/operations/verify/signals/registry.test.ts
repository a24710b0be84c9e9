import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { REASON_CODES } from "../reasonCodes.js";
import { SIGNALS } from "./registry.js";
import type { Signal } from "./signal.js";

/** The registry is the one list of signals (CONTRIBUTING.md, "Add a signal"). */
describe("the signal registry", () => {
  it("lists every Signal a module of signals/ exports, once", async () => {
    const dir = new URL("./", import.meta.url);
    const exported: Signal[] = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
      const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
      for (const value of Object.values(mod)) {
        const s = value as Partial<Signal> | null;
        if (s && typeof s === "object" && typeof s.findings === "function" && typeof s.codes === "object") {
          exported.push(s as Signal);
        }
      }
    }
    expect(exported.length).toBe(SIGNALS.length);
    for (const s of exported) expect(SIGNALS).toContain(s);
    expect(new Set(SIGNALS.map((s) => s.name)).size).toBe(SIGNALS.length);
  });

  it("no two signals claim one reason code, and each is in the catalogue with the signal's category", () => {
    const seen = new Map<string, string>();
    for (const signal of SIGNALS as readonly Signal[]) {
      for (const [code, category] of Object.entries(signal.codes)) {
        expect({ code, claimedBy: seen.get(code) }).toEqual({ code, claimedBy: undefined });
        seen.set(code, signal.name);
        expect(REASON_CODES[code as keyof typeof REASON_CODES]).toBe(category);
      }
    }
  });
});
