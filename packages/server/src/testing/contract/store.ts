import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";
import { agentTests } from "./agents.js";
import { challengeTests } from "./challenges.js";
import { counterTests } from "./counters.js";
import { eventTests } from "./events.js";
import { feedbackTests } from "./feedback.js";
import { keyTests } from "./keys.js";
import { policyTests } from "./policies.js";
import { tenantTests } from "./tenants.js";

/**
 * The store contract: every adapter must pass this suite against its real database. It runs each
 * area's tests (one module each, as store/contract/ declares the areas) on one database with the
 * tenants t1 and t2, and what the Store itself promises (its patient calls, ping, warmUp); the
 * areas with suites of their own (insights, campaigns, eventSearch, feedbackResolutions, attempts,
 * removal) open their own. `openSecond` opens another handle on the same database where the adapter allows several in one
 * process (a pool); SQLite's cross-process behaviour is proven with real processes in
 * sqlite/multiProcess.test.ts, because two synchronous connections in one thread block each other.
 */
export function storeContract(
  name: string,
  open: () => Promise<Store>,
  openSecond?: () => Promise<Store>,
  options: { countersExpireThemselves?: boolean } = {},
): void {
  describe(`store contract: ${name}`, () => {
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      a = await open();
      b = openSecond ? await openSecond() : a;
      await a.tenants.create({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
      await a.tenants.create({ id: "t2", rawPii: true, logOnly: true, createdAt: 2 });
    });
    afterAll(async () => {
      await a.close();
      if (b !== a) await b.close();
    });

    const stores = () => ({ a, b });
    tenantTests(stores);
    keyTests(stores);
    counterTests(() => ({ a: a.counters, b: b.counters }), options);

    it("the patient calls (Store.patient) read and count the same data as verify's: one count, one key, one stored answer", async () => {
      const now = 3_000_000;
      const hits = Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a.counters : b.patient.counters).hit([{ name: "c-patient", windowMs: 60_000 }], now),
      );
      const readings = (await Promise.all(hits)).map((r) => r[0]?.current ?? 0);
      expect(readings.sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));

      const key = { tenantId: "t1", scopes: ["feedback:write" as const], logOnly: false, createdAt: 1 };
      await a.apiKeys.create({ ...key, id: "key_patient", revokedAt: null }, "hash-patient");
      expect(await b.patient.apiKeys.findByHash("hash-patient")).toEqual(
        await a.apiKeys.findByHash("hash-patient"),
      );
      expect(await a.apiKeys.revoke("key_patient", 12)).toBe(true);
      expect((await b.patient.apiKeys.findByHash("hash-patient"))?.key.revokedAt).toBe(12);

      const idem = {
        tenantId: "t1",
        operation: "feedback",
        key: "k-patient",
        response: { fingerprint: "f-patient", statusCode: 200, body: { ok: true } },
        expiresAt: 10_000,
      };
      expect(await a.events.record(testEvent("evt_patient_idem"), idem)).toEqual({ kind: "recorded" });
      expect(await b.patient.idempotency.find(idem, 500)).toEqual(await a.idempotency.find(idem, 500));
      expect((await b.patient.idempotency.find(idem, 500))?.fingerprint).toBe("f-patient");
    });

    eventTests(stores);
    challengeTests(stores);
    feedbackTests(stores);
    agentTests(stores);
    policyTests(stores);

    it("answers ping", async () => {
      await expect(a.ping()).resolves.toBeUndefined();
    });

    it("warms up (its reads find nothing and change nothing)", async () => {
      const before = await a.tenants.list();
      await expect(a.warmUp()).resolves.toBeUndefined();
      await expect(b.warmUp()).resolves.toBeUndefined();
      expect(await a.tenants.list()).toEqual(before);
    });
  });
}
