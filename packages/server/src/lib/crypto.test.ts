import { describe, expect, it } from "vitest";
import { canonicalJson, timeOrderedId } from "./crypto.js";

describe("timeOrderedId", () => {
  it("sorts by creation time and keeps 128 random bits", () => {
    const a = timeOrderedId("evt", 1_700_000_000_000);
    const b = timeOrderedId("evt", 1_700_000_000_001);
    const c = timeOrderedId("evt", 1_800_000_000_000);
    expect([c, b, a].sort()).toEqual([a, b, c]);
    const body = Buffer.from(a.slice(4), "base64url");
    expect(body.length).toBe(22);
    expect(body.readUIntBE(0, 6)).toBe(1_700_000_000_000);
    const same = new Set(Array.from({ length: 1000 }, () => timeOrderedId("evt", 5)));
    expect(same.size).toBe(1000);
  });
});

describe("canonicalJson", () => {
  it("sorts keys at every depth and omits undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: [2, 1] } })).toBe('{"a":{"c":[2,1]},"b":1}');
  });
});
