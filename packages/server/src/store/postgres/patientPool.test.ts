import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultProxy } from "../../testing/faultProxy.js";
import { testEvent } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { type Store, StoreUnavailableError } from "../interfaces.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * What is not on verify's 50 ms path waits for a busy database: with every round trip slowed to
 * ~120 ms, feedback is still stored (its statements run on the patient pool, 2 s) while verify's own
 * statements time out at their 40 ms and verify would answer degraded. Before, feedback shared
 * verify's timeout and answered 503 under light PostgreSQL load.
 */
const SUITE = "PostgreSQL's patient pool";
const schema = await postgresSchemaOrSkip(SUITE, "the patient-pool test");

if (schema) {
  let proxy: FaultProxy;
  let store: Store;
  beforeAll(async () => {
    const url = new URL(TEST_POSTGRES_URL);
    proxy = await new FaultProxy(url.hostname, Number(url.port || 5432)).start();
    url.host = `127.0.0.1:${proxy.port}`;
    store = await openPostgresStore({
      url: url.toString(),
      statementTimeoutMs: 40,
      patientTimeoutMs: 2_000,
      poolSize: 2,
      poolMin: 1,
      schema,
    });
    await store.events.record(testEvent("evt_patient", { tenantId: "t1" }), undefined);
  });
  afterAll(async () => {
    await store?.close();
    await proxy?.stop();
  });

  describe(SUITE, () => {
    it("a slow database: feedback is stored while verify's statements time out", async () => {
      proxy.delayMs = 60;
      proxy.set("slow");
      try {
        await expect(store.events.get("t1", "evt_patient")).rejects.toBeInstanceOf(StoreUnavailableError);
        const appended = await store.feedback.append(
          {
            feedbackId: "fb_patient",
            tenantId: "t1",
            eventId: "evt_patient",
            outcome: "converted",
            value: null,
            unit: null,
            source: null,
            observedAt: 5000,
            receivedAt: 6000,
            identity: "identity-patient",
          },
          [],
          undefined,
        );
        expect(appended.kind).toBe("appended");
      } finally {
        proxy.set("pass");
      }
      expect((await store.feedback.listForEvent("t1", "evt_patient")).map((o) => o.feedbackId)).toEqual([
        "fb_patient",
      ]);
    }, 30_000);
  });
}
