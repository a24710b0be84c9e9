import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, it } from "vitest";
import { storeContract } from "../../testing/storeContract.js";
import { openPostgresStore } from "./postgresStore.js";

/** The local server every developer and CI machine runs; override with WARDEN_TEST_POSTGRES_URL. */
const url = process.env.WARDEN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
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

if (await reachable()) {
  // Each run in its own schema, dropped afterwards.
  const schema = `warden_contract_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  afterAll(async () => {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });
  const open = () => openPostgresStore({ url, statementTimeoutMs: 5000, poolSize: 8, schema });
  // Two stores = two connection pools, as two Warden processes would have.
  storeContract("postgres", open, open);
} else {
  const banner = `PostgreSQL is not reachable at ${url}: the PostgreSQL store contract suite is SKIPPED`;
  process.stderr.write(`\n${"!".repeat(banner.length)}\n${banner}\n${"!".repeat(banner.length)}\n\n`);
  describe("store contract: postgres", () => {
    it.skip(`SKIPPED: ${banner}`, () => undefined);
  });
}
