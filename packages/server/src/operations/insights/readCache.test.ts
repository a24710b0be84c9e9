import { describe, expect, it } from "vitest";
import { ReadCache } from "./readCache.js";

describe("the console's read cache", () => {
  it("reads once per key within the lifetime, shares a read in flight, and reads again after it", async () => {
    let now = 0;
    const cache = new ReadCache(1000, 10, () => now);
    let reads = 0;
    const read = async () => ++reads;
    const [a, b] = await Promise.all([cache.get("k", read), cache.get("k", read)]);
    expect([a, b, reads]).toEqual([1, 1, 1]);
    now = 999;
    expect(await cache.get("k", read)).toBe(1);
    expect(await cache.get("other", read)).toBe(2);
    now = 1000;
    expect(await cache.get("k", read)).toBe(3);
  });

  it("never keeps a failed read, and holds at most `max` keys", async () => {
    const cache = new ReadCache(1000, 2, () => 0);
    await expect(cache.get("k", () => Promise.reject(new Error("store down")))).rejects.toThrow("store down");
    expect(await cache.get("k", async () => "fresh")).toBe("fresh");
    await cache.get("a", async () => 1);
    await cache.get("b", async () => 2);
    let reread = false;
    await cache.get("k", async () => {
      reread = true;
      return "again";
    });
    expect(reread).toBe(true);
  });
});
