import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOperatorRecord, ChallengeRecord, Store } from "../store/interfaces.js";
import { newSigningKey } from "../tokens/signingKeys.js";
import { counterTests } from "./counterContract.js";
import { testEvent } from "./harness.js";

/**
 * The store contract: every adapter must pass this suite against its real database.
 * `openSecond` opens another handle on the same database where the adapter allows several in one
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

    const event = (id: string) => testEvent(id);

    it("creates a tenant once; a second create of the same id changes nothing", async () => {
      expect(await b.tenants.create({ id: "t1", rawPii: true, logOnly: true, createdAt: 9 })).toBe(false);
      expect(await a.tenants.get("t1")).toEqual({ id: "t1", rawPii: false, logOnly: false, createdAt: 1 });
      expect(await a.tenants.get("nope")).toBeUndefined();
      expect((await a.tenants.list()).map((t) => t.id)).toEqual(["t1", "t2"]);
    });

    it("finds a key with its tenant by hash, and sees a revocation at once", async () => {
      const rec = {
        id: "key_1",
        tenantId: "t2",
        scopes: ["verify:write" as const],
        logOnly: true,
        createdAt: 5,
        revokedAt: null,
      };
      await a.apiKeys.create(rec, "hash-1");
      const found = await b.apiKeys.findByHash("hash-1");
      expect(found?.key).toEqual(rec);
      expect(found?.tenant.id).toBe("t2");
      expect(found?.tenant.rawPii).toBe(true);
      expect(await b.apiKeys.findByHash("hash-unknown")).toBeUndefined();
      expect(await a.apiKeys.revoke("key_1", 77)).toBe(true);
      expect(await b.apiKeys.revoke("key_1", 78)).toBe(false);
      expect((await b.apiKeys.findByHash("hash-1"))?.key.revokedAt).toBe(77);
      expect((await a.apiKeys.list("t2")).map((k) => k.id)).toEqual(["key_1"]);
      expect(await a.apiKeys.list("t1")).toEqual([]);
    });

    it("keeps exactly one active signing key through concurrent first inserts and rotations", async () => {
      const firsts = await Promise.all(
        [a, b, a, b].map(async (s) => s.signingKeys.insertIfNone(await newSigningKey(10))),
      );
      expect(firsts.filter(Boolean)).toHaveLength(1);
      await Promise.all([a, b].map(async (s) => s.signingKeys.rotate(await newSigningKey(20), 1000)));
      const published = await a.signingKeys.listPublished(21);
      expect(published.filter((k) => k.retiredAt === null)).toHaveLength(1);
      expect(published).toHaveLength(3);
      // Retired keys stop being published once publishUntil has passed.
      const later = await a.signingKeys.listPublished(20 + 1000 + 1);
      expect(later).toHaveLength(1);
      expect(later[0]?.retiredAt).toBeNull();
    });

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

    describe("challenges: clearing and redemption", () => {
      const challenge = (id: string, extra: Partial<ChallengeRecord> = {}): ChallengeRecord => ({
        id,
        tenantId: "t1",
        eventId: `evt_of_${id}`,
        session: "s1",
        method: "proof_of_work",
        difficulty: 4,
        seed: "seed",
        instructions: { type: "pow" },
        issuedAt: 1_000,
        expiresAt: 10_000,
        clearedAt: null,
        redeemedAt: null,
        proofRef: null,
        completionKey: null,
        attempt: "attempt-1",
        eventDegraded: false,
        ...extra,
      });
      const redemption = (challengeId: string, extra: Record<string, unknown> = {}) => ({
        challengeId,
        eventId: `evt_of_${challengeId}`,
        session: "s1",
        attempt: "attempt-1",
        clearedSince: 1_000,
        ...extra,
      });
      const reverify = (id: string) => ({ ...event(id), createdAt: 3_000, attempt: "attempt-1" });
      /** Issues a challenge as the service does: on a recorded event of the tenant. */
      const issue = async (c: ChallengeRecord) => {
        const on = testEvent(c.eventId, { tenantId: c.tenantId, session: c.session, decision: "challenge" });
        await a.events.record(on, undefined);
        expect(await a.challenges.insert(c)).toBe(true);
      };

      it("clears once, and a provider object proves one clear only", async () => {
        await issue(challenge("chl_p1"));
        await issue(challenge("chl_p2"));
        expect(await a.challenges.clear("t1", "chl_p1", "s1", 2_000, "seti_1")).toMatchObject({
          kind: "cleared",
        });
        expect(await b.challenges.clear("t1", "chl_p1", "s1", 2_000, "seti_other")).toEqual({
          kind: "not_clearable",
        });
        expect(await b.challenges.clear("t1", "chl_p2", "s1", 2_000, "seti_1")).toEqual({
          kind: "proof_reused",
        });
        expect((await a.challenges.get("t1", "chl_p2"))?.clearedAt).toBeNull();
        expect(await a.challenges.clear("t1", "chl_p2", "s2", 2_000)).toEqual({ kind: "not_clearable" });
        expect(await a.challenges.clear("t1", "chl_p2", "s1", 10_000)).toEqual({ kind: "not_clearable" });
      });

      it("the clearing update records the completion key; a later clear attempt changes nothing", async () => {
        await issue(challenge("chl_k1"));
        const cleared = await a.challenges.clear("t1", "chl_k1", "s1", 2_000, undefined, "key-a.fp-a");
        expect(cleared).toMatchObject({ kind: "cleared", challenge: { completionKey: "key-a.fp-a" } });
        expect(await b.challenges.clear("t1", "chl_k1", "s1", 2_500, undefined, "key-b.fp-b")).toEqual({
          kind: "not_clearable",
        });
        expect(await b.challenges.get("t1", "chl_k1")).toMatchObject({
          clearedAt: 2_000,
          completionKey: "key-a.fp-a",
        });
        await issue(challenge("chl_k2"));
        await a.challenges.clear("t1", "chl_k2", "s1", 2_000);
        expect(await b.challenges.get("t1", "chl_k2")).toMatchObject({ completionKey: null });
      });

      it("redeems a clear only with the event that honours it: same session and attempt, in the window, once", async () => {
        await issue(challenge("chl_r1"));
        await a.challenges.clear("t1", "chl_r1", "s1", 2_000);
        for (const [id, extra] of [
          ["evt_r_session", { session: "s2" }],
          ["evt_r_attempt", { attempt: "attempt-2" }],
          ["evt_r_window", { clearedSince: 2_001 }],
          ["evt_r_unknown", { challengeId: "chl_none" }],
        ] as const) {
          const outcome = await a.events.record(reverify(id), undefined, undefined, {
            redeem: redemption("chl_r1", extra),
          });
          expect(outcome, id).toEqual({ kind: "not_redeemed" });
          expect(await a.events.get("t1", id)).toBeUndefined();
        }
        // Not yet cleared: not redeemable either.
        await issue(challenge("chl_r2"));
        expect(
          await a.events.record(reverify("evt_r_uncleared"), undefined, undefined, {
            redeem: redemption("chl_r2"),
          }),
        ).toEqual({ kind: "not_redeemed" });
        expect(
          await a.events.record(reverify("evt_r_ok"), undefined, undefined, { redeem: redemption("chl_r1") }),
        ).toEqual({ kind: "recorded" });
        expect((await b.challenges.get("t1", "chl_r1"))?.redeemedAt).toBe(3_000);
        expect(
          await b.events.record(reverify("evt_r_again"), undefined, undefined, {
            redeem: redemption("chl_r1"),
          }),
        ).toEqual({ kind: "not_redeemed" });
      });

      it("an aborted or refused record leaves the clear redeemable, and its idempotency key unclaimed", async () => {
        await issue(challenge("chl_r3"));
        await a.challenges.clear("t1", "chl_r3", "s1", 2_000);
        const idem = {
          tenantId: "t1",
          operation: "verify",
          key: "k-redeem",
          response: { fingerprint: "f", statusCode: 200, body: {} },
          expiresAt: 9e12,
        };
        await expect(
          a.events.record(
            reverify("evt_r_aborted"),
            idem,
            { commit: () => false },
            { redeem: redemption("chl_r3") },
          ),
        ).rejects.toThrow(/aborted/);
        expect((await a.challenges.get("t1", "chl_r3"))?.redeemedAt).toBeNull();
        expect(
          await a.events.record(reverify("evt_r_wrong"), idem, undefined, {
            redeem: redemption("chl_r3", { attempt: "other" }),
          }),
        ).toEqual({ kind: "not_redeemed" });
        expect(await a.idempotency.find(idem, 0)).toBeUndefined();
        expect(
          await a.events.record(reverify("evt_r_idem"), idem, undefined, { redeem: redemption("chl_r3") }),
        ).toEqual({ kind: "recorded" });
        expect(await a.idempotency.find(idem, 0)).toMatchObject({ fingerprint: "f" });
      });

      it("of concurrent records redeeming one clear exactly one is recorded", async () => {
        await issue(challenge("chl_r4"));
        await a.challenges.clear("t1", "chl_r4", "s1", 2_000);
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? a : b).events.record(reverify(`evt_r4_${i}`), undefined, undefined, {
              redeem: redemption("chl_r4"),
            }),
          ),
        );
        expect(outcomes.filter((o) => o.kind === "recorded")).toHaveLength(1);
        expect(outcomes.filter((o) => o.kind === "not_redeemed")).toHaveLength(9);
        const written = await Promise.all(
          Array.from({ length: 10 }, (_, i) => a.events.get("t1", `evt_r4_${i}`)),
        );
        expect(written.filter(Boolean)).toHaveLength(1);
      });

      it("redeems one clear per event, whichever of its challenges earned it, and says so", async () => {
        const onEvent = { eventId: "evt_twice" };
        for (const id of ["chl_e1", "chl_e2", "chl_e3", "chl_e4"]) {
          await issue(challenge(id, onEvent));
          await a.challenges.clear("t1", id, "s1", 2_000);
        }
        expect(await b.challenges.eventClearUsed("t1", "evt_twice")).toBe(false);
        expect(
          await a.events.record(reverify("evt_once_1"), undefined, undefined, {
            redeem: redemption("chl_e1", onEvent),
          }),
        ).toEqual({ kind: "recorded" });
        expect(await b.challenges.eventClearUsed("t1", "evt_twice")).toBe(true);
        expect(await b.challenges.eventClearUsed("t2", "evt_twice")).toBe(false);
        // Another challenge of the same event, solved too: its clear is not redeemable, and refusing
        // it leaves nothing written.
        expect(
          await b.events.record(reverify("evt_once_2"), undefined, undefined, {
            redeem: redemption("chl_e2", onEvent),
          }),
        ).toEqual({ kind: "not_redeemed" });
        expect(await a.events.get("t1", "evt_once_2")).toBeUndefined();
        expect((await a.challenges.get("t1", "chl_e2"))?.redeemedAt).toBeNull();
        // A redemption naming another event than its challenge's is refused.
        await issue(challenge("chl_e5"));
        await a.challenges.clear("t1", "chl_e5", "s1", 2_000);
        expect(
          await a.events.record(reverify("evt_once_5"), undefined, undefined, {
            redeem: redemption("chl_e5", { eventId: "evt_elsewhere" }),
          }),
        ).toEqual({ kind: "not_redeemed" });
        // Concurrently, two challenges of one fresh event: one clear.
        const fresh = { eventId: "evt_race" };
        await issue(challenge("chl_e6", fresh));
        await issue(challenge("chl_e7", fresh));
        await a.challenges.clear("t1", "chl_e6", "s1", 2_000);
        await a.challenges.clear("t1", "chl_e7", "s1", 2_000);
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? a : b).events.record(reverify(`evt_once_race_${i}`), undefined, undefined, {
              redeem: redemption(i % 2 ? "chl_e6" : "chl_e7", fresh),
            }),
          ),
        );
        expect(outcomes.filter((o) => o.kind === "recorded")).toHaveLength(1);
      });
    });

    describe("feedback ledger", () => {
      const obs = (
        id: string,
        outcome: string,
        extra: Partial<{
          value: number;
          unit: string;
          eventId: string;
          identity: string;
          receivedAt: number;
        }> = {},
      ) => ({
        feedbackId: id,
        tenantId: "t1",
        eventId: extra.eventId ?? "evt_fb",
        outcome,
        value: extra.value ?? null,
        unit: extra.unit ?? (extra.value === undefined ? null : "usd"),
        source: null,
        observedAt: 5000,
        receivedAt: extra.receivedAt ?? 6000,
        identity: extra.identity ?? `identity-${id}`,
      });
      beforeAll(async () => {
        await a.events.record({ ...event("evt_fb"), action: "signup" }, undefined);
        await a.events.record({ ...event("evt_fb2"), action: "api_key" }, undefined);
        await a.events.record({ ...event("evt_race"), action: "signup" }, undefined);
      });

      it("appends effective observations; compatible labels coexist", async () => {
        const burn = await a.feedback.append(obs("fb_1", "credit_burn", { value: 40 }), [], undefined);
        expect(burn).toMatchObject({
          kind: "appended",
          observation: { status: "effective", conflictsWith: null },
        });
        const conv = await b.feedback.append(
          obs("fb_2", "converted", { value: 1200 }),
          ["abuse_confirmed"],
          undefined,
        );
        expect(conv).toMatchObject({ kind: "appended", observation: { status: "effective" } });
      });

      it("quarantines an observation that conflicts with an effective earlier one, keeping a reference", async () => {
        const late = await a.feedback.append(
          obs("fb_3", "abuse_confirmed"),
          ["converted", "false_positive"],
          undefined,
        );
        expect(late).toMatchObject({
          kind: "appended",
          observation: { status: "quarantined", conflictsWith: "fb_2" },
        });
        // A quarantined observation never causes another quarantine.
        const fp = await a.feedback.append(
          obs("fb_4", "false_positive"),
          ["abuse_confirmed", "credit_burn"],
          undefined,
        );
        expect(fp).toMatchObject({
          kind: "appended",
          observation: { status: "quarantined", conflictsWith: "fb_1" },
        });
        const list = await b.feedback.listForEvent("t1", "evt_fb");
        expect(list.map((o) => [o.feedbackId, o.status])).toEqual([
          ["fb_1", "effective"],
          ["fb_2", "effective"],
          ["fb_3", "quarantined"],
          ["fb_4", "quarantined"],
        ]);
        expect(await b.feedback.listForEvent("t2", "evt_fb")).toEqual([]);
      });

      it("returns duplicate for the same identity and stores it once", async () => {
        const dup = await a.feedback.append(
          obs("fb_5", "credit_burn", { value: 40, identity: "identity-fb_1" }),
          [],
          undefined,
        );
        expect(dup).toEqual({ kind: "duplicate", feedbackId: "fb_1" });
        expect((await a.feedback.listForEvent("t1", "evt_fb")).length).toBe(4);
      });

      it("claims idempotency keys in the same transaction: replay, conflict, nothing else written", async () => {
        const idem = (fingerprint: string) => ({
          tenantId: "t1",
          operation: "feedback",
          key: "fk-1",
          response: { fingerprint, statusCode: 200, body: { ok: true, eventId: "evt_fb2" } },
          expiresAt: 9e12,
        });
        expect(
          (
            await a.feedback.append(
              obs("fb_6", "chargeback", { eventId: "evt_fb2", value: 5 }),
              [],
              idem("f1"),
            )
          ).kind,
        ).toBe("appended");
        expect(
          await a.feedback.append(
            obs("fb_7", "chargeback", { eventId: "evt_fb2", value: 6 }),
            [],
            idem("f1"),
          ),
        ).toMatchObject({
          kind: "replay",
        });
        expect(
          await a.feedback.append(
            obs("fb_8", "chargeback", { eventId: "evt_fb2", value: 7 }),
            [],
            idem("f2"),
          ),
        ).toEqual({
          kind: "conflict",
        });
        expect((await a.feedback.listForEvent("t1", "evt_fb2")).map((o) => o.feedbackId)).toEqual(["fb_6"]);
      });

      it("aggregates by outcome, unit and status, filtered by observedAt range and the event's action", async () => {
        const rows = await a.feedback.aggregate("t1", {});
        const find = (outcome: string, status: string) =>
          rows.find((r) => r.outcome === outcome && r.status === status);
        expect(find("credit_burn", "effective")).toMatchObject({ count: 1, total: 40, unit: "usd" });
        expect(find("abuse_confirmed", "quarantined")).toMatchObject({ count: 1 });
        expect((await a.feedback.aggregate("t1", { action: "api_key" })).map((r) => r.outcome)).toEqual([
          "chargeback",
        ]);
        expect(await a.feedback.aggregate("t1", { since: 5001 })).toEqual([]);
        expect(await a.feedback.aggregate("t1", { until: 5000 })).toEqual([]);
        expect(await a.feedback.aggregate("t2", {})).toEqual([]);
        const q = await a.feedback.quarantined("t1", {}, 10);
        expect(q.map((x) => [x.observation.feedbackId, x.conflictsWith?.feedbackId])).toEqual([
          ["fb_4", "fb_1"],
          ["fb_3", "fb_2"],
        ]);
      });

      it("of concurrent conflicting observations on one event exactly one side stays effective", async () => {
        const outcomes = Array.from({ length: 20 }, (_, i) => (i % 2 ? "false_positive" : "abuse_confirmed"));
        await Promise.all(
          outcomes.map((o, i) =>
            (i % 2 ? a : b).feedback.append(
              obs(`fb_r${i}`, o, { eventId: "evt_race" }),
              o === "false_positive" ? ["abuse_confirmed"] : ["false_positive"],
              undefined,
            ),
          ),
        );
        const list = await a.feedback.listForEvent("t1", "evt_race");
        const effective = new Set(list.filter((o) => o.status === "effective").map((o) => o.outcome));
        expect(list).toHaveLength(20);
        expect(effective.size).toBe(1);
      });
    });

    describe("agents", () => {
      const key = {
        thumbprint: "tp1",
        alg: "ed25519" as const,
        jwk: { kty: "OKP", crv: "Ed25519", x: "AAAA" },
      };
      const op = (o: Partial<AgentOperatorRecord> = {}): AgentOperatorRecord => ({
        operator: "Example Bot",
        signatureAgent: "https://bot.example",
        keys: [key],
        fetchDirectory: false,
        createdAt: 10,
        updatedAt: 10,
        ...o,
      });

      it("registers an operator, replaces it keeping createdAt, lists and removes it", async () => {
        await a.agents.put(op());
        await b.agents.put(op({ keys: [], fetchDirectory: true, createdAt: 99, updatedAt: 20 }));
        expect(await a.agents.list()).toEqual([op({ keys: [], fetchDirectory: true, updatedAt: 20 })]);
        expect(await b.agents.remove("Example Bot")).toBe(true);
        expect(await a.agents.remove("Example Bot")).toBe(false);
        expect(await a.agents.list()).toEqual([]);
      });

      it("a key stored for one operator is refused for another, and of concurrent claims one wins", async () => {
        expect(await a.agents.put(op())).toEqual({ ok: true });
        expect(
          await b.agents.put(op({ operator: "Squatter", signatureAgent: "https://sq.example" })),
        ).toEqual({
          ok: false,
          thumbprint: "tp1",
          operator: "Example Bot",
        });
        // The owner may replace its own entry with the same key.
        expect(await b.agents.put(op({ updatedAt: 30 }))).toEqual({ ok: true });
        expect((await a.agents.list()).map((r) => r.operator)).toEqual(["Example Bot"]);
        expect(await a.agents.remove("Example Bot")).toBe(true);

        const claims = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 ? a : b).agents.put(
              op({ operator: `Claimant ${i}`, keys: [{ ...key, thumbprint: "tp2" }] }),
            ),
          ),
        );
        expect(claims.filter((c) => c.ok)).toHaveLength(1);
        const stored = await a.agents.list();
        expect(stored).toHaveLength(1);
        for (const r of stored) await a.agents.remove(r.operator);
      });
    });

    describe("tenant policies", () => {
      it("numbers versions per tenant and reads the highest", async () => {
        expect(await a.policies.current("t1")).toBeUndefined();
        expect(await a.policies.put("t1", '{"a":1}', 5)).toBe(1);
        expect(await b.policies.put("t1", '{"a":2}', 6)).toBe(2);
        expect(await a.policies.put("t2", "{}", 7)).toBe(1);
        expect(await b.policies.current("t1")).toEqual({
          tenantId: "t1",
          version: 2,
          document: '{"a":2}',
          createdAt: 6,
        });
      });

      it("gives concurrent sets distinct versions and loses none", async () => {
        const versions = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).policies.put("t2", `{"n":${i}}`, 8)),
        );
        expect(new Set(versions).size).toBe(10);
        expect((await a.policies.current("t2"))?.version).toBe(11);
      });

      it("stores a change made from a version only while that version is the highest; of concurrent ones, one", async () => {
        await a.tenants.create({ id: "t3", rawPii: false, logOnly: false, createdAt: 3 });
        expect(await a.policies.putIfCurrent("t3", '{"n":0}', 1, 9)).toBeUndefined();
        expect(await a.policies.putIfCurrent("t3", '{"n":1}', 0, 9)).toBe(1);
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? a : b).policies.putIfCurrent("t3", `{"m":${i}}`, 1, 10),
          ),
        );
        expect(results.filter((v) => v === 2)).toHaveLength(1);
        expect(results.filter((v) => v === undefined)).toHaveLength(5);
        expect((await b.policies.current("t3"))?.version).toBe(2);
        expect(await b.policies.putIfCurrent("t3", '{"n":3}', 1, 11)).toBeUndefined();
      });
    });

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
