import { beforeAll, describe, expect, it } from "vitest";
import type { ChallengeRecord, Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

/**
 * Challenges: cleared once, redeemed once with the event that honours them (ChallengeStore,
 * events.record). Registered in the store contract's describe (store.ts): `stores` gives its two
 * handles on one database once they are open, with its tenants t1 and t2.
 */
export function challengeTests(stores: () => { a: Store; b: Store }): void {
  const event = (id: string) => testEvent(id);

  describe("challenges: clearing and redemption", () => {
    let a: Store;
    let b: Store;
    beforeAll(() => {
      ({ a, b } = stores());
    });
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

    it("tells whether a proof cleared a challenge of the tenant: only once the clear recorded it", async () => {
      await issue(challenge("chl_u1"));
      await issue(challenge("chl_u2"));
      expect(await b.challenges.proofUsed("t1", "pow:used-seed")).toBe(false);
      // A refused clear (another session) records nothing.
      await a.challenges.clear("t1", "chl_u1", "s2", 2_000, "pow:used-seed");
      expect(await b.challenges.proofUsed("t1", "pow:used-seed")).toBe(false);
      await a.challenges.clear("t1", "chl_u1", "s1", 2_000, "pow:used-seed");
      expect(await b.challenges.proofUsed("t1", "pow:used-seed")).toBe(true);
      expect(await b.challenges.proofUsed("t2", "pow:used-seed")).toBe(false);
      expect(await b.challenges.clear("t1", "chl_u2", "s1", 2_000, "pow:used-seed")).toEqual({
        kind: "proof_reused",
      });
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
}
