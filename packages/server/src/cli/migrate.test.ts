import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config.js";
import { openStore } from "../deps.js";
import { startServer } from "../serve.js";
import { MIGRATION_NAMES, SchemaBehindError } from "../store/migrations.js";
import { openPostgresStore } from "../store/postgres/postgresStore.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { tempDir } from "../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../testing/postgres.js";
import { runCli } from "./main.js";

const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI in this process, collecting what it prints. */
async function cli(argv: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, env);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("warden migrate, and serve --no-migrate", () => {
  const env = {
    WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "roles.db")}`,
    WARDEN_LOG_LEVEL: "silent",
    WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, "spool"),
    PORT: "0",
    HOST: "127.0.0.1",
  };

  it("serve --no-migrate refuses a database `warden migrate` has not brought up to date, naming the command", async () => {
    const refused = startServer(loadConfig(env), () => undefined, { migrate: false });
    await expect(refused).rejects.toBeInstanceOf(SchemaBehindError);
    await expect(refused).rejects.toThrow(/lacks \d+ migration\(s\) \(0001_core, .*\): run `warden migrate`/);
    // It changed nothing: the schema is still missing.
    await expect(
      openSqliteStore({ file: path.join(dir, "roles.db"), busyTimeoutMs: 1000, migrate: false }),
    ).rejects.toBeInstanceOf(SchemaBehindError);
  });

  it("warden migrate brings the schema up to date; then serve --no-migrate starts, and makes no demo tenant unless asked", async () => {
    const migrated = await cli(["migrate"], env);
    expect(migrated).toMatchObject({ code: 0, err: "" });
    expect(migrated.out).toContain(
      `${MIGRATION_NAMES.length} migrations, the latest ${MIGRATION_NAMES.at(-1)}`,
    );
    const printed: string[] = [];
    const server = await startServer(loadConfig(env), (l) => printed.push(l), { migrate: false });
    try {
      expect(await server.app.inject({ method: "GET", url: "/healthz" }).then((r) => r.statusCode)).toBe(200);
      const tenants = await openStore(loadConfig(env), 1000, { migrate: false });
      expect(await tenants.tenants.count()).toBe(0);
      await tenants.close();
      expect(printed.join("\n")).not.toContain("created tenant 'demo'");
    } finally {
      await server.close();
    }
  });

  it("serve --no-migrate and --demo are flags of serve; migrate takes none", async () => {
    expect((await cli(["migrate", "extra"], env)).code).toBe(2);
    expect((await cli(["serve", "--no-migrate", "--help"], env)).out).toContain(
      "warden serve [--workers <n>|auto] [--no-migrate] [--demo]",
    );
  });
});

const schema = await postgresSchemaOrSkip("migrate: postgres", "the PostgreSQL --no-migrate check");
if (schema) {
  describe("PostgreSQL: a schema check without migrating", () => {
    const open = (migrate: boolean) =>
      openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 5000, poolSize: 2, schema, migrate });

    it("refuses an empty schema without creating anything in it, then opens once migrated", async () => {
      await expect(open(false)).rejects.toBeInstanceOf(SchemaBehindError);
      await (await open(true)).close();
      const store = await open(false);
      expect(await store.tenants.count()).toBe(0);
      await store.close();
    });
  });
}
