import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs/configuration.md");

describe("docs/configuration.md", () => {
  it("lists exactly the environment variables the configuration reads, with the defaults it applies", () => {
    const read = new Set<string>();
    const recording = new Proxy(
      {},
      {
        get: (_, name) => {
          if (typeof name === "string") read.add(name);
          return undefined;
        },
      },
    );
    loadConfig(recording);
    const rows = fs
      .readFileSync(DOC, "utf8")
      .split("\n")
      // | `NAME` | `default` (or "(none)") | meaning |
      .map((line) => /^\| `([A-Z_]+)`\s*\|\s*(?:`([^`]*)`|\(none\))/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null);
    expect(rows.map((m) => m[1]).sort()).toEqual([...read].sort());
    // Spot checks that a documented default is the applied one.
    const defaults = Object.fromEntries(rows.map((m) => [m[1], m[2]]));
    const config = loadConfig({});
    expect(defaults.WARDEN_VERIFY_DEADLINE_MS).toBe(String(config.verifyDeadlineMs));
    expect(defaults.WARDEN_STORE_TIMEOUT_MS).toBe(String(config.storeTimeoutMs));
    expect(defaults.WARDEN_RATE_LIMIT_MAX).toBe(String(config.rateLimitMax));
    expect(defaults.WARDEN_PG_POOL_SIZE).toBe(String(config.pgPoolSize));
    expect(defaults.PORT).toBe(String(config.port));
  });
});
