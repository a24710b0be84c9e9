import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../testing/harness.js";
import { postgresDatabaseOrSkip, TEST_POSTGRES_URL } from "../testing/postgres.js";
import { serveUntilExit as serve } from "../testing/wardenProcess.js";

/**
 * A `warden serve` that cannot start exits non-zero by itself: a process that neither listens nor
 * exits is never restarted by its supervisor. serveUntilExit kills it after 30 s (its bound), and a
 * killed process has no exit code: an exit code of 1 is an exit of its own.
 */
const held: Server[] = [];
afterAll(() => {
  for (const s of held) s.close();
});

describe("a warden serve that cannot start", () => {
  it("exits 1 by itself, naming EADDRINUSE, when its port is taken", async () => {
    const taken = createServer();
    held.push(taken);
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", () => r()));
    const port = String((taken.address() as { port: number }).port);
    const dir = tempDir();
    const result = await serve({
      WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "w.db")}`,
      WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, "spool"),
      HOST: "127.0.0.1",
      PORT: port,
    });
    expect(result.stderr).toMatch(/EADDRINUSE/);
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
  }, 40_000);
});

const database = await postgresDatabaseOrSkip(
  "a warden serve whose PostgreSQL refuses it",
  "the failed-start test",
);
if (database) {
  describe("a warden serve whose PostgreSQL refuses it", () => {
    it("exits 1 by itself, naming the database, when it does not exist", async () => {
      const url = new URL(TEST_POSTGRES_URL);
      url.pathname = "/warden_no_such_database";
      const dir = tempDir();
      const result = await serve({
        WARDEN_DATABASE_URL: url.toString(),
        WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, "spool"),
        HOST: "127.0.0.1",
        PORT: "0",
      });
      expect(result.stderr).toMatch(/warden_no_such_database/);
      expect({ code: result.code, signal: result.signal }).toEqual({ code: 1, signal: null });
    }, 40_000);
  });
}
