import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir, testEvent } from "../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../testing/postgres.js";
import type { Store } from "./interfaces.js";
import { openPostgresStore } from "./postgres/postgresStore.js";
import { openSqliteStore } from "./sqlite/sqliteStore.js";

/**
 * The statements that take a database back to before 0014_idempotency_event (its answers unlinked).
 * The migrations after it run again and leave what they find as it is.
 */
const UNDO_0014 = [
  "drop index idempotency_event",
  "alter table idempotency drop column event_id",
  "delete from kysely_migration where name >= '0014_idempotency_event'",
];

const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const sqliteFile = path.join(dir, "migration.db");
const schema = await postgresSchemaOrSkip(
  "0014_idempotency_event: postgres",
  "the idempotency-event migration on PostgreSQL",
);

const stores: [string, () => Promise<Store>, () => Promise<void>][] = [
  [
    "SQLite",
    () => openSqliteStore({ file: sqliteFile, busyTimeoutMs: 5000 }),
    async () => {
      const db = new SQLite(sqliteFile);
      for (const statement of UNDO_0014) db.exec(statement);
      db.close();
    },
  ],
];
if (schema) {
  stores.push([
    "PostgreSQL",
    () => openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 5000, poolSize: 2, schema }),
    async () => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      await client.query(`set search_path to ${schema}`);
      for (const statement of UNDO_0014) await client.query(statement);
      await client.end();
    },
  ]);
}

describe.each(stores)("0014_idempotency_event on %s", (_name, open, undo) => {
  it("links the answers stored before it to their events, so removing an event removes them", async () => {
    let store = await open();
    await store.tenants.create({ id: "m1", rawPii: false, logOnly: false, createdAt: 1 });
    const live = 10 ** 12;
    const key = (operation: string) => ({ tenantId: "m1", operation, key: `k-${operation}` });
    await store.events.record(testEvent("evt_m1", { tenantId: "m1" }), {
      ...key("verify"),
      response: { fingerprint: "f", statusCode: 200, body: { decision: "allow", eventId: "evt_m1" } },
      expiresAt: live,
    });
    const base = {
      tenantId: "m1",
      eventId: "evt_m1",
      outcome: "converted",
      value: null,
      unit: null,
      source: null,
      observedAt: 2000,
      receivedAt: 2000,
    };
    await store.feedback.append({ ...base, feedbackId: "fb_m1", identity: "identity-fb_m1" }, [], {
      ...key("feedback"),
      response: { fingerprint: "f", statusCode: 200, body: { ok: true, eventId: "evt_m1" } },
      expiresAt: live,
    });
    await store.close();
    await undo();

    store = await open();
    try {
      expect(await store.removal.erase("m1", { eventId: "evt_m1" })).toMatchObject({
        events: 1,
        observations: 1,
        idempotentAnswers: 2,
      });
      expect(await store.idempotency.find(key("verify"), 0)).toBeUndefined();
      expect(await store.idempotency.find(key("feedback"), 0)).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
