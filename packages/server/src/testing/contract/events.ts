import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

/**
 * Events and the answers stored under their keys: conditional writes, exactly one record per key,
 * the write signal (EventStore, IdempotencyStore). Registered in the store contract's describe
 * (store.ts): `stores` gives its two handles on one database once they are open, with its tenants
 * t1 and t2.
 */
export function eventTests(stores: () => { a: Store; b: Store }): void {
  const event = (id: string) => testEvent(id);

  describe("events and idempotent answers", () => {
    let a: Store;
    let b: Store;
    beforeAll(() => {
      ({ a, b } = stores());
    });
    it("writes an event on condition that its API key is not revoked, when asked", async () => {
      const key = { tenantId: "t1", scopes: ["verify:write" as const], logOnly: false, createdAt: 1 };
      await a.apiKeys.create({ ...key, id: "key_live", revokedAt: null }, "hash-live");
      await a.apiKeys.create({ ...key, id: "key_dead", revokedAt: null }, "hash-dead");
      expect(await b.apiKeys.isActive("key_live")).toBe(true);
      expect(await a.apiKeys.revoke("key_dead", 9)).toBe(true);
      expect(await b.apiKeys.isActive("key_dead")).toBe(false);
      expect(await b.apiKeys.isActive("key_never")).toBe(false);

      const live = testEvent("evt_live", { keyId: "key_live" });
      expect(await a.events.record(live, undefined, undefined, { activeKey: true })).toEqual({
        kind: "recorded",
      });
      // A retry of the same write is still "recorded", not mistaken for a revoked key.
      expect(await b.events.record(live, undefined, undefined, { activeKey: true })).toEqual({
        kind: "recorded",
      });
      expect(await a.events.get("t1", "evt_live")).toEqual(live);

      const dead = testEvent("evt_dead", { keyId: "key_dead" });
      expect(await a.events.record(dead, undefined, undefined, { activeKey: true })).toEqual({
        kind: "key_revoked",
      });
      expect(await a.events.get("t1", "evt_dead")).toBeUndefined();
      const idem = {
        tenantId: "t1",
        operation: "verify",
        key: "k-dead",
        response: { fingerprint: "f", statusCode: 200, body: {} },
        expiresAt: 10_000,
      };
      expect(await b.events.record(dead, idem, undefined, { activeKey: true })).toEqual({
        kind: "key_revoked",
      });
      expect(await a.idempotency.find(idem, 500)).toBeUndefined();
      // Without the condition (degraded events written after an outage) the key does not matter.
      expect(await a.events.record(dead, undefined)).toEqual({ kind: "recorded" });
      expect(await a.events.get("t1", "evt_dead")).toEqual(dead);
    });

    it("records at once a live key's and a revoked key's events each on its own; a refused signal writes nothing", async () => {
      const key = { tenantId: "t1", scopes: ["verify:write" as const], logOnly: false, createdAt: 1 };
      await a.apiKeys.create({ ...key, id: "key_on", revokedAt: null }, "hash-on");
      await a.apiKeys.create({ ...key, id: "key_off", revokedAt: null }, "hash-off");
      await a.apiKeys.revoke("key_off", 9);
      const events = Array.from({ length: 12 }, (_, i) =>
        testEvent(`evt_mixed_${i}`, { keyId: i % 3 === 0 ? "key_off" : "key_on" }),
      );
      const outcomes = await Promise.all([
        ...events.map((e, i) => (i % 2 ? a : b).events.record(e, undefined, undefined, { activeKey: true })),
        a.events
          .record(
            testEvent("evt_mixed_refused", { keyId: "key_on" }),
            undefined,
            { commit: () => false },
            {
              activeKey: true,
            },
          )
          .catch((err: Error) => err.name),
      ]);
      expect(outcomes).toEqual([
        ...events.map((e) => ({ kind: e.keyId === "key_off" ? "key_revoked" : "recorded" })),
        "AbortError",
      ]);
      for (const e of events) {
        expect(await a.events.get("t1", e.id)).toEqual(e.keyId === "key_off" ? undefined : e);
      }
      expect(await a.events.get("t1", "evt_mixed_refused")).toBeUndefined();
    });

    it("with the API-key condition too: of concurrent records with one idempotency key exactly one is recorded, the same payload replays it, another conflicts", async () => {
      const k = { tenantId: "t1", scopes: ["verify:write" as const], logOnly: false, createdAt: 1 };
      await a.apiKeys.create({ ...k, id: "key_idem", revokedAt: null }, "hash-idem");
      const idem = (fingerprint: string) => ({
        tenantId: "t1",
        operation: "verify",
        key: "k-active-burst",
        response: { fingerprint, statusCode: 200, body: { fingerprint } },
        expiresAt: 9e12,
      });
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? a : b).events.record(
            testEvent(`evt_ab_${i}`, { keyId: "key_idem", createdAt: 1000 }),
            idem(i % 4 === 3 ? "other" : "same"),
            undefined,
            { activeKey: true },
          ),
        ),
      );
      const recorded = outcomes.flatMap((o, i) => (o.kind === "recorded" ? [i] : []));
      expect(recorded).toHaveLength(1);
      const winner = recorded[0] as number;
      const winning = winner % 4 === 3 ? "other" : "same";
      outcomes.forEach((o, i) => {
        if (i === winner) return;
        const mine = i % 4 === 3 ? "other" : "same";
        if (mine === winning) expect(o).toEqual({ kind: "replay", response: idem(winning).response });
        else expect(o).toEqual({ kind: "conflict" });
      });
      for (let i = 0; i < 20; i++) {
        expect((await b.events.get("t1", `evt_ab_${i}`)) !== undefined).toBe(i === winner);
      }
    });

    it("records an event and reads it back only for its tenant", async () => {
      expect(await a.events.record(event("evt_a"), undefined)).toEqual({ kind: "recorded" });
      // A retry of the same write (its first answer lost) changes nothing.
      expect(await b.events.record(event("evt_a"), undefined)).toEqual({ kind: "recorded" });
      expect(await b.events.get("t1", "evt_a")).toEqual(event("evt_a"));
      expect(await b.events.get("t2", "evt_a")).toBeUndefined();
    });

    it("of concurrent records with one idempotency key exactly one is recorded; the rest replay it", async () => {
      const idem = (body: unknown, fingerprint = "fp1") => ({
        tenantId: "t1",
        operation: "verify",
        key: "k-concurrent",
        response: { fingerprint, statusCode: 200, body },
        expiresAt: 10_000,
      });
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? a : b).events.record(event(`evt_c${i}`), idem({ n: i })),
        ),
      );
      const recorded = outcomes.flatMap((o, i) => (o.kind === "recorded" ? [i] : []));
      expect(recorded).toHaveLength(1);
      const winner = recorded[0] as number;
      for (const o of outcomes) if (o.kind === "replay") expect(o.response.body).toEqual({ n: winner });
      for (let i = 0; i < 10; i++) {
        expect(await a.events.get("t1", `evt_c${i}`)).toEqual(i === winner ? event(`evt_c${i}`) : undefined);
      }
      const conflict = await a.events.record(event("evt_c_other"), idem({ n: 99 }, "fp2"));
      expect(conflict).toEqual({ kind: "conflict" });
      expect(await a.events.get("t1", "evt_c_other")).toBeUndefined();
      expect(
        await b.idempotency.find({ tenantId: "t1", operation: "verify", key: "k-concurrent" }, 1000),
      ).toEqual({
        fingerprint: "fp1",
        statusCode: 200,
        body: { n: winner },
      });
      // Keys are scoped per tenant and operation.
      expect(
        await b.idempotency.find({ tenantId: "t2", operation: "verify", key: "k-concurrent" }, 1000),
      ).toBeUndefined();
    });

    it("lets an expired idempotency key be used afresh", async () => {
      const idem = (fingerprint: string, expiresAt: number) => ({
        tenantId: "t1",
        operation: "verify",
        key: "k-expiring",
        response: { fingerprint, statusCode: 200, body: { fingerprint } },
        expiresAt,
      });
      expect(await a.events.record({ ...event("evt_e1"), createdAt: 100 }, idem("old", 500))).toEqual({
        kind: "recorded",
      });
      expect(
        await a.idempotency.find({ tenantId: "t1", operation: "verify", key: "k-expiring" }, 600),
      ).toBeUndefined();
      expect(await b.events.record({ ...event("evt_e2"), createdAt: 600 }, idem("new", 5000))).toEqual({
        kind: "recorded",
      });
      expect(await a.idempotency.purgeExpired(4000)).toBeGreaterThanOrEqual(0);
      expect(
        (await a.idempotency.find({ tenantId: "t1", operation: "verify", key: "k-expiring" }, 700))
          ?.fingerprint,
      ).toBe("new");
    });

    it("asks its signal once before the write becomes irreversible; a replay asks nothing", async () => {
      let asked = 0;
      const signal = {
        commit: () => {
          asked++;
          return true;
        },
      };
      const idem = {
        tenantId: "t1",
        operation: "verify",
        key: "k-signal",
        response: { fingerprint: "f", statusCode: 200, body: {} },
        expiresAt: 9e12,
      };
      expect(await a.events.record(event("evt_signal_1"), idem, signal)).toEqual({ kind: "recorded" });
      expect(asked).toBe(1);
      expect((await a.events.record(event("evt_signal_2"), idem, signal)).kind).toBe("replay");
      expect(asked).toBe(1);
      expect(await a.events.record(event("evt_signal_3"), undefined, signal)).toEqual({ kind: "recorded" });
      expect(asked).toBe(2);
      expect(await b.events.get("t1", "evt_signal_1")).toBeDefined();
      expect(await b.events.get("t1", "evt_signal_2")).toBeUndefined();
    });

    it("writes nothing when its signal refuses the commit", async () => {
      await expect(
        a.events.record(
          event("evt_aborted"),
          {
            tenantId: "t1",
            operation: "verify",
            key: "k-abort",
            response: { fingerprint: "f", statusCode: 200, body: {} },
            expiresAt: 9e12,
          },
          { commit: () => false },
        ),
      ).rejects.toThrow(/aborted/);
      expect(await a.events.get("t1", "evt_aborted")).toBeUndefined();
      expect(
        await a.idempotency.find({ tenantId: "t1", operation: "verify", key: "k-abort" }, 0),
      ).toBeUndefined();
    });
  });
}
