import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/harness.js";
import { KeyCache } from "../sql/keyCache.js";
import { openSqliteStore } from "./sqliteStore.js";

const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const KEY = {
  tenantId: "t",
  scopes: ["verify:write" as const],
  logOnly: false,
  createdAt: 1,
  revokedAt: null,
};

describe("API key lookups on SQLite are cached only while nothing can have changed them", () => {
  it("a key revoked or re-scoped through another connection (the CLI, another process) is seen on the next lookup", async () => {
    const file = path.join(dir, "other-connection.db");
    const store = await openSqliteStore({ file, busyTimeoutMs: 1000 });
    try {
      await store.tenants.create({ id: "t", rawPii: false, logOnly: false, createdAt: 1 });
      await store.apiKeys.create({ id: "k1", ...KEY }, "h1");
      expect((await store.apiKeys.findByHash("h1"))?.key.revokedAt).toBeNull();
      expect((await store.apiKeys.findByHash("h1"))?.key.revokedAt).toBeNull(); // now from the cache

      const cli = new SQLite(file, { timeout: 1000 });
      cli.prepare("update api_keys set revoked_at = 42 where id = 'k1'").run();
      expect((await store.apiKeys.findByHash("h1"))?.key.revokedAt).toBe(42);

      cli.prepare("update tenants set log_only = 1 where id = 't'").run();
      expect((await store.apiKeys.findByHash("h1"))?.tenant.logOnly).toBe(true);

      cli.prepare("delete from api_keys where id = 'k1'").run();
      expect(await store.apiKeys.findByHash("h1")).toBeUndefined();
      cli.close();
    } finally {
      await store.close();
    }
  });

  it("a key revoked through this store is refused at once, and cached answers cannot be changed", async () => {
    const store = await openSqliteStore({ file: path.join(dir, "same-connection.db"), busyTimeoutMs: 1000 });
    try {
      await store.tenants.create({ id: "t", rawPii: false, logOnly: false, createdAt: 1 });
      await store.apiKeys.create({ id: "k2", ...KEY }, "h2");
      const first = await store.apiKeys.findByHash("h2");
      if (!first) throw new Error("key not found");
      expect(await store.apiKeys.findByHash("h2")).toBe(first);
      expect(() => {
        (first.key.scopes as string[]).push("feedback:write");
      }).toThrow();
      expect(await store.apiKeys.revoke("k2", 7)).toBe(true);
      expect((await store.apiKeys.findByHash("h2"))?.key.revokedAt).toBe(7);
    } finally {
      await store.close();
    }
  });
});

describe("KeyCache", () => {
  const value = (id: string) => ({
    key: { id, ...KEY },
    tenant: { id: "t", rawPii: false, logOnly: false, createdAt: 1 },
  });

  it("drops everything when the data version moves", () => {
    let version = 1;
    const cache = new KeyCache(() => version);
    cache.set("a", value("a"), cache.get("a").ticket);
    expect(cache.get("a").hit?.key.id).toBe("a");
    version = 2;
    expect(cache.get("a").hit).toBeUndefined();
  });

  it("does not keep what a lookup read before an invalidation that happened while it ran", () => {
    const cache = new KeyCache(() => 1);
    const { ticket } = cache.get("a");
    cache.invalidate(); // e.g. a revoke committed while the lookup was in flight
    cache.set("a", value("a"), ticket);
    expect(cache.get("a").hit).toBeUndefined();
  });

  it("holds at most its bound", () => {
    const cache = new KeyCache(() => 1, 3);
    for (const id of ["a", "b", "c", "d"]) cache.set(id, value(id), cache.get(id).ticket);
    expect(["a", "b", "c", "d"].filter((id) => cache.get(id).hit).length).toBeLessThanOrEqual(3);
    expect(cache.get("d").hit?.key.id).toBe("d");
  });
});
