import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FeedbackResolution, Observation, Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

type NewObservation = Omit<Observation, "status" | "conflictsWith">;

/** The conflicts of operations/feedback/conflicts.ts that these tests use. */
const CONFLICTS: Record<string, string[]> = {
  converted: ["abuse_confirmed"],
  abuse_confirmed: ["converted", "false_positive"],
  false_positive: ["abuse_confirmed", "credit_burn"],
  credit_burn: ["false_positive"],
};

/**
 * Resolving quarantined feedback (FeedbackStore.resolve), the same on every adapter: once only, even
 * when resolutions race on two handles (two processes' pools on PostgreSQL); the status set in the
 * same transaction; append-only records with who and when. Tenants "r1" and "r2", events evt_res_*.
 */
export function feedbackResolutionContract(
  name: string,
  open: () => Promise<Store>,
  openSecond?: () => Promise<Store>,
): void {
  describe(`feedback resolution contract: ${name}`, () => {
    let a: Store;
    let b: Store;
    let n = 0;
    beforeAll(async () => {
      a = await open();
      b = openSecond ? await openSecond() : a;
      for (const id of ["r1", "r2"])
        await a.tenants.create({ id, rawPii: false, logOnly: false, createdAt: 1 });
    });
    afterAll(async () => {
      await a.close();
      if (b !== a) await b.close();
    });

    /** A fresh event of r1 and an observation appender for it (ids unique across the database). */
    async function freshEvent(tag: string) {
      const eventId = `evt_res_${tag}_${++n}`;
      await a.events.record(testEvent(eventId, { tenantId: "r1" }), undefined);
      const append = async (id: string, outcome: string, value: number | null = null) => {
        const obs: NewObservation = {
          feedbackId: `fr_${eventId}_${id}`,
          tenantId: "r1",
          eventId,
          outcome,
          value,
          unit: value === null ? null : "usd",
          source: null,
          observedAt: 5000,
          receivedAt: 6000 + n,
          identity: `identity-${eventId}-${id}`,
        };
        const out = await a.feedback.append(obs, CONFLICTS[outcome] ?? [], undefined);
        if (out.kind !== "appended") throw new Error(`append ${id}: ${out.kind}`);
        return out.observation;
      };
      const statuses = async () =>
        Object.fromEntries(
          (await b.feedback.listForEvent("r1", eventId)).map((o) => [
            o.feedbackId.split("_").pop(),
            o.status,
          ]),
        );
      return { eventId, append, statuses };
    }

    const resolution = (
      o: Observation,
      how: FeedbackResolution["resolution"],
      extra: Partial<FeedbackResolution> = {},
    ) => ({
      tenantId: o.tenantId,
      feedbackId: o.feedbackId,
      eventId: o.eventId,
      resolution: how,
      note: null,
      keyId: "key_reviewer",
      resolvedAt: 90_000,
      ...extra,
    });

    it("reject: the quarantined observation becomes rejected and the effective one is untouched; the record keeps who, when and why", async () => {
      const e = await freshEvent("reject");
      const conv = await e.append("conv", "converted", 100);
      const abuse = await e.append("abuse", "abuse_confirmed");
      expect(abuse).toMatchObject({ status: "quarantined", conflictsWith: conv.feedbackId });
      const out = await b.feedback.resolve(
        resolution(abuse, "reject", { note: "chargeback was a bank error" }),
        [],
      );
      expect(out).toEqual({
        kind: "resolved",
        resolution: {
          ...resolution(abuse, "reject", { note: "chargeback was a bank error" }),
          superseded: [],
        },
      });
      expect(await e.statuses()).toEqual({ conv: "effective", abuse: "rejected" });
      expect(await a.feedback.resolutionsForEvent("r1", e.eventId)).toEqual([
        { ...resolution(abuse, "reject", { note: "chargeback was a bank error" }), superseded: [] },
      ]);
      // Rejected leaves the quarantined list.
      const listed = (await a.feedback.quarantined("r1", {}, 500)).map((q) => q.observation.feedbackId);
      expect(listed).not.toContain(abuse.feedbackId);
    });

    it("accept: the observation becomes effective and every effective one it conflicts with is superseded, named in the record", async () => {
      const e = await freshEvent("accept");
      const abuse = await e.append("abuse", "abuse_confirmed");
      const burn = await e.append("burn", "credit_burn", 40);
      const fp = await e.append("fp", "false_positive");
      expect(fp).toMatchObject({ status: "quarantined", conflictsWith: abuse.feedbackId });
      const out = await a.feedback.resolve(resolution(fp, "accept"), CONFLICTS.false_positive ?? []);
      expect(out).toMatchObject({
        kind: "resolved",
        resolution: { resolution: "accept", superseded: [abuse.feedbackId, burn.feedbackId] },
      });
      expect(await e.statuses()).toEqual({ abuse: "superseded", burn: "superseded", fp: "effective" });
      // Totals follow: the aggregate holds the accepted one as effective, the others as superseded.
      const rows = await b.feedback.aggregate("r1", {});
      const row = (outcome: string, status: string) =>
        rows.find((r) => r.outcome === outcome && r.status === status)?.count ?? 0;
      expect(row("false_positive", "effective")).toBeGreaterThanOrEqual(1);
      expect(row("credit_burn", "superseded")).toBeGreaterThanOrEqual(1);
      // An observation arriving later meets the accepted label, not the superseded ones.
      const late = await e.append("late", "abuse_confirmed");
      expect(late).toMatchObject({ status: "quarantined", conflictsWith: fp.feedbackId });
    });

    it("a resolution is final: asked again it returns the stored one, whatever is asked; an effective observation is not quarantined; another tenant's is unknown", async () => {
      const e = await freshEvent("final");
      const conv = await e.append("conv", "converted", 10);
      const abuse = await e.append("abuse", "abuse_confirmed");
      const first = await a.feedback.resolve(resolution(abuse, "accept", { keyId: "key_first" }), [
        "converted",
      ]);
      expect(first.kind).toBe("resolved");
      const stored = {
        ...resolution(abuse, "accept", { keyId: "key_first" }),
        superseded: [conv.feedbackId],
      };
      for (const how of ["accept", "reject"] as const) {
        expect(
          await b.feedback.resolve(resolution(abuse, how, { keyId: "key_second", resolvedAt: 95_000 }), []),
        ).toEqual({ kind: "already_resolved", resolution: stored });
      }
      expect(await e.statuses()).toEqual({ conv: "superseded", abuse: "effective" });
      expect(await a.feedback.resolve(resolution(conv, "accept"), [])).toEqual({
        kind: "not_quarantined",
        status: "superseded",
      });
      expect(await a.feedback.resolve({ ...resolution(abuse, "reject"), tenantId: "r2" }, [])).toEqual({
        kind: "unknown",
      });
      expect(await a.feedback.get("r2", abuse.feedbackId)).toBeUndefined();
      expect(await a.feedback.get("r1", abuse.feedbackId)).toMatchObject({ status: "effective" });
      expect(await a.feedback.resolutionsForEvent("r1", e.eventId)).toEqual([stored]);
      expect(await a.feedback.resolutionsForEvent("r2", e.eventId)).toEqual([]);
    });

    it("of concurrent resolutions of one observation on two handles exactly one wins, and the status is the winner's", async () => {
      for (let round = 0; round < 5; round++) {
        const e = await freshEvent("race");
        await e.append("conv", "converted", 10);
        const abuse = await e.append("abuse", "abuse_confirmed");
        const outcomes = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? a : b).feedback.resolve(
              resolution(abuse, i % 3 ? "accept" : "reject", { keyId: `key_${i}`, resolvedAt: 90_000 + i }),
              i % 3 ? (CONFLICTS.abuse_confirmed ?? []) : [],
            ),
          ),
        );
        const won = outcomes.filter((o) => o.kind === "resolved");
        expect(won).toHaveLength(1);
        const winner = won[0]?.kind === "resolved" ? won[0].resolution : undefined;
        for (const o of outcomes.filter((x) => x.kind !== "resolved")) {
          expect(o).toEqual({ kind: "already_resolved", resolution: winner });
        }
        expect(await a.feedback.resolutionsForEvent("r1", e.eventId)).toEqual([winner]);
        expect(await e.statuses()).toEqual(
          winner?.resolution === "accept"
            ? { conv: "superseded", abuse: "effective" }
            : { conv: "effective", abuse: "rejected" },
        );
      }
    });

    it("a resolution racing appends on the same event never leaves two contradicting observations effective", async () => {
      for (let round = 0; round < 5; round++) {
        const e = await freshEvent("mixed");
        await e.append("conv", "converted", 10);
        const abuse = await e.append("abuse", "abuse_confirmed");
        await Promise.all([
          b.feedback.resolve(resolution(abuse, "accept"), CONFLICTS.abuse_confirmed ?? []),
          e.append("conv2", "converted", 20),
          e.append("fp", "false_positive"),
        ]);
        const effective = (await a.feedback.listForEvent("r1", e.eventId)).filter(
          (o) => o.status === "effective",
        );
        for (const x of effective) {
          for (const y of effective) expect(CONFLICTS[x.outcome] ?? []).not.toContain(y.outcome);
        }
        expect(effective.length).toBeGreaterThan(0);
      }
    });
  });
}
