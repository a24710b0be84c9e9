import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRecord } from "../../domain.js";
import { FaultProxy, type MarkedFault } from "../../testing/faultProxy.js";
import { testEvent } from "../../testing/harness.js";
import { postgresDatabaseOrSkip } from "../../testing/postgres.js";
import type { EventStore, RecordOutcome, Store, WriteSignal } from "../interfaces.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * A write whose connection gave up on it (query_timeout, a lost connection) may have committed all
 * the same: verify must not answer degraded beside an event, an idempotent answer or a spent clear
 * that the database kept. Each case sends a write through a proxy that delivers it but answers late
 * (the COMMIT or the single statement runs, its reply misses the client's timeout), on each of the
 * event store's three write paths; and, so that "recorded" is never a guess, a write the proxy never
 * delivers in time must be refused and must not commit when the proxy lets it through afterwards.
 */
const SUITE = "PostgreSQL writes abandoned by their connection";
const databaseUrl = await postgresDatabaseOrSkip(SUITE, "the abandoned-write test");

if (databaseUrl) {
  const url = new URL(databaseUrl);
  let admin: pg.Client;
  let proxy: FaultProxy;
  let store: Store;
  beforeAll(async () => {
    proxy = await new FaultProxy(url.hostname, Number(url.port || 5432)).start();
    proxy.delayMs = 400;
    const viaProxy = new URL(databaseUrl);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    store = await openPostgresStore({
      url: viaProxy.toString(),
      statementTimeoutMs: 100,
      poolSize: 4,
      poolMin: 1,
    });
    await store.tenants.create({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
    const key = { tenantId: "t1", scopes: ["verify:write" as const], logOnly: false, createdAt: 1 };
    await store.apiKeys.create({ ...key, id: "key_x", revokedAt: null }, "hash-x");
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await store?.close();
    await proxy?.stop();
    await admin?.end();
  });

  const kept = async (eventId: string): Promise<boolean> =>
    (await admin.query("select 1 from events where id = $1", [eventId])).rowCount === 1;
  const idem = (key: string): Parameters<EventStore["record"]>[1] => ({
    tenantId: "t1",
    operation: "verify",
    key,
    response: { fingerprint: key, statusCode: 200, body: { key } },
    expiresAt: 9e12,
  });
  /** A signal that, like verify's, lets the write through. */
  const go = (): WriteSignal => ({ commit: () => true });

  /** The event store's three write paths on PostgreSQL, and the text that marks each one's commit. */
  const paths: [string, (e: EventRecord) => Promise<RecordOutcome>, (e: EventRecord) => string][] = [
    [
      "a transaction (claim, event, COMMIT)",
      (e) => store.events.record(e, idem(`k-${e.id}`), go(), { activeKey: false }),
      () => "commit",
    ],
    [
      "one statement (claim and event)",
      (e) => store.events.record(e, idem(`k-${e.id}`), go(), { activeKey: true }),
      (e) => e.id,
    ],
    ["a batch of events", (e) => store.events.record(e, undefined, go(), { activeKey: true }), (e) => e.id],
  ];

  /** Sends `write` with `fault` on its connection from the moment it sends `marker`. */
  const under = async (fault: MarkedFault, marker: string, write: () => Promise<RecordOutcome>) => {
    proxy.on(marker, fault);
    try {
      return await write().then(
        (outcome) => ({ outcome }),
        (err: Error) => ({ failed: err.message }),
      );
    } finally {
      proxy.set("pass");
    }
  };

  describe(SUITE, () => {
    it.each(paths)(
      "committed although its reply came late: %s is answered recorded",
      async (_, write, marker) => {
        const event = testEvent(`evt_late_${Math.random().toString(36).slice(2)}`, { createdAt: Date.now() });
        const result = await under("late replies", marker(event), () => write(event));
        expect(await kept(event.id)).toBe(true);
        expect(result).toEqual({ outcome: { kind: "recorded" } });
      },
    );

    it.each(paths)(
      "never delivered in time: %s is refused and stays uncommitted",
      async (_, write, marker) => {
        const event = testEvent(`evt_held_${Math.random().toString(36).slice(2)}`, { createdAt: Date.now() });
        const result = await under("held requests", marker(event), () => write(event));
        expect(result).toMatchObject({ failed: expect.any(String) });
        // The held bytes reached the server when the proxy let them go (under's finally).
        await new Promise((r) => setTimeout(r, 300));
        expect(await kept(event.id)).toBe(false);
      },
    );
  });
}
