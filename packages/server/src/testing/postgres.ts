import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll } from "vitest";
import type { Store } from "../store/interfaces.js";
import { openPostgresStore } from "../store/postgres/postgresStore.js";
import { skipLoudly } from "./skip.js";

/** The local server every developer and CI machine runs; override with WARDEN_TEST_POSTGRES_URL. */
export const TEST_POSTGRES_URL =
  process.env.WARDEN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A schema of its own for one test file, dropped after the file's tests. When PostgreSQL cannot be
 * reached it says so in a banner, registers `suite` as skipped (so the skip shows in the results,
 * never a silent pass) and resolves undefined.
 */
export async function postgresSchemaOrSkip(suite: string, what: string): Promise<string | undefined> {
  if (!(await reachable())) {
    return skipLoudly(suite, `PostgreSQL is not reachable at ${TEST_POSTGRES_URL}: ${what} is SKIPPED`);
  }
  const schema = `warden_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  afterAll(async () => {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });
  return schema;
}

/**
 * A database of its own for a suite that runs whole `warden` processes (they take a URL, not a
 * schema), dropped afterwards. Skips loudly like postgresSchemaOrSkip. Resolves the database URL.
 */
export async function postgresDatabaseOrSkip(suite: string, what: string): Promise<string | undefined> {
  if (!(await reachable())) {
    return skipLoudly(suite, `PostgreSQL is not reachable at ${TEST_POSTGRES_URL}: ${what} is SKIPPED`);
  }
  const name = `warden_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  afterAll(async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The stores a test of the service runs on, for `describe.each`: SQLite (the harness's own, so no
 * opener) and, when `schema` was granted by postgresSchemaOrSkip, PostgreSQL in that schema.
 */
export function sqliteAndPostgres(
  schema: string | undefined,
): [string, (() => Promise<Store>) | undefined][] {
  if (schema === undefined) return [["SQLite", undefined]];
  const postgres = (): Promise<Store> =>
    openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 2000, poolSize: 10, poolMin: 2, schema });
  return [
    ["SQLite", undefined],
    ["PostgreSQL", postgres],
  ];
}
