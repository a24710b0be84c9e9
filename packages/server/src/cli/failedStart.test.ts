import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveUntilExit as serve } from "../lib/wardenProcess.js";
import { tempDir } from "../testing/harness.js";
import { postgresDatabaseOrSkip, TEST_POSTGRES_URL } from "../testing/postgres.js";

/**
 * A `warden serve` that cannot start exits non-zero within seconds: a process that neither listens
 * nor exits is never restarted by its supervisor.
 */
const held: Server[] = [];
afterAll(() => {
  for (const s of held) s.close();
});

describe("a warden serve that cannot start", () => {
  it("exits 1 within seconds when its port is taken (EADDRINUSE)", async () => {
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
    expect(result.code).toBe(1);
    expect(result.ms).toBeLessThan(15_000);
  }, 40_000);
});

const database = await postgresDatabaseOrSkip(
  "a warden serve whose PostgreSQL refuses it",
  "the failed-start test",
);
if (database) {
  describe("a warden serve whose PostgreSQL refuses it", () => {
    it("exits 1 within seconds when the database does not exist", async () => {
      const url = new URL(TEST_POSTGRES_URL);
      url.pathname = "/warden_no_such_database";
      const dir = tempDir();
      const result = await serve({
        WARDEN_DATABASE_URL: url.toString(),
        WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, "spool"),
        HOST: "127.0.0.1",
        PORT: "0",
      });
      expect(result.code).toBe(1);
      expect(result.ms).toBeLessThan(20_000);
    }, 40_000);
  });
}
