import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultProxy } from "../../testing/faultProxy.js";
import { bearer, makeTestApp, type TestApp, testEvent } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { type Store, StoreUnavailableError } from "../interfaces.js";
import { openPostgresStore } from "./postgresStore.js";

/**
 * What is not on verify's 50 ms path waits for a busy database: with every round trip slowed to
 * ~120 ms, feedback is still stored (its statements run on the patient pool, 2 s) while verify's own
 * statements time out at their 40 ms and verify would answer degraded. Before, feedback shared
 * verify's timeout and answered 503 under light PostgreSQL load; and, through the app, the routes
 * off verify's path looked their API key up and counted their rate limit on verify's connections,
 * so they answered 503 before reaching their own patient statements.
 */
const SUITE = "PostgreSQL's patient pool";
const schema = await postgresSchemaOrSkip(SUITE, "the patient-pool test");

if (schema) {
  let proxy: FaultProxy;
  let store: Store;
  let t: TestApp;
  let apiKey: string;
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
    // The console is signed into at a name of its own (WARDEN_ADMIN_HOSTS, http/adminHosts.ts).
    t = await makeTestApp({ store, env: { WARDEN_ADMIN_HOSTS: "warden.test" } });
    await t.tenant("t1");
    ({ apiKey } = await t.key("t1"));
    await store.events.record(testEvent("evt_patient", { tenantId: "t1" }), undefined);
    await store.events.record(
      testEvent("evt_patient_http", { tenantId: "t1", decision: "challenge", session: "s-patient" }),
      undefined,
    );
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.stop();
  });

  describe(SUITE, () => {
    it("a slow database: feedback is stored while verify's statements time out", async () => {
      proxy.delayMs = 60;
      proxy.set("slow");
      try {
        await expect(store.apiKeys.findByHash("no-such-hash")).rejects.toBeInstanceOf(StoreUnavailableError);
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

    it("a slow database: feedback, a challenge and a console read answer 200 through the app while verify degrades", async () => {
      const post = (url: string, payload: object) =>
        t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });
      proxy.delayMs = 60;
      proxy.set("slow");
      try {
        const verify = await post("/v1/verify", { action: "signup", subject: {}, session: "s-patient" });
        expect(verify.json()).toMatchObject({ degraded: true, decision: "challenge" });
        const feedback = await post("/v1/feedback", { eventId: "evt_patient_http", outcome: "converted" });
        expect(feedback.statusCode, feedback.body).toBe(200);
        // Under an Idempotency-Key, as clients retry: its replay is looked up on the patient pool too.
        const keyed = await t.app.inject({
          method: "POST",
          url: "/v1/feedback",
          headers: { ...bearer(apiKey), "idempotency-key": "fb-patient-1" },
          payload: { eventId: "evt_patient_http", outcome: "credit_burn", value: 3 },
        });
        expect(keyed.statusCode, keyed.body).toBe(200);
        const challenge = await post("/v1/challenge", { eventId: "evt_patient_http", session: "s-patient" });
        expect(challenge.statusCode, challenge.body).toBe(200);
        for (const url of [
          "/v1/events?limit=5",
          "/v1/events/evt_patient_http",
          "/v1/attempts/evt_patient_http",
        ]) {
          const read = await t.app.inject({ method: "GET", url, headers: bearer(apiKey) });
          expect(read.statusCode, `${url}: ${read.body}`).toBe(200);
        }
        const signIn = await t.app.inject({
          method: "POST",
          url: "/console/session",
          headers: { "content-type": "application/json", host: "warden.test", origin: "http://warden.test" },
          payload: { apiKey },
        });
        expect(signIn.statusCode, signIn.body).toBe(200);
      } finally {
        proxy.set("pass");
      }
    }, 30_000);
  });
}
