import { beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

/**
 * The feedback ledger: append, quarantine, aggregates (FeedbackStore). Registered in the store
 * contract's describe (store.ts): `stores` gives its two handles on one database once they are
 * open, with its tenants t1 and t2.
 */
export function feedbackTests(stores: () => { a: Store; b: Store }): void {
  const event = (id: string) => testEvent(id);

  describe("feedback ledger", () => {
    let a: Store;
    let b: Store;
    beforeAll(() => {
      ({ a, b } = stores());
    });
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
        (await a.feedback.append(obs("fb_6", "chargeback", { eventId: "evt_fb2", value: 5 }), [], idem("f1")))
          .kind,
      ).toBe("appended");
      expect(
        await a.feedback.append(obs("fb_7", "chargeback", { eventId: "evt_fb2", value: 6 }), [], idem("f1")),
      ).toMatchObject({
        kind: "replay",
      });
      expect(
        await a.feedback.append(obs("fb_8", "chargeback", { eventId: "evt_fb2", value: 7 }), [], idem("f2")),
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
}
