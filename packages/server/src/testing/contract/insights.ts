import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChallengeRecord, Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

const HOUR = 3_600_000;
const T0 = 100 * HOUR;

/**
 * The console's reads (InsightStore) and sign-ins (ConsoleSessionStore), the same on every adapter:
 * a tenant "i1" with events in three hours, observations and challenges, and a tenant "i2" whose data
 * never shows.
 */
export function insightContract(name: string, open: () => Promise<Store>): void {
  describe(`insight store contract: ${name}`, () => {
    let s: Store;
    beforeAll(async () => {
      s = await open();
      for (const id of ["i1", "i2"])
        await s.tenants.create({ id, rawPii: false, logOnly: false, createdAt: 1 });
      const events = [
        testEvent("evt_i01", {
          tenantId: "i1",
          createdAt: T0 + 1,
          decision: "allow",
          wouldBeDecision: "allow",
        }),
        testEvent("evt_i02", {
          tenantId: "i1",
          createdAt: T0 + 2,
          decision: "allow",
          wouldBeDecision: "allow",
        }),
        testEvent("evt_i03", {
          tenantId: "i1",
          createdAt: T0 + HOUR + 5,
          decision: "challenge",
          wouldBeDecision: "challenge",
          actorType: "agent_abusive",
          risk: { estimate: 0.7, low: 0.5, high: 0.9, raised: true },
          session: "s-chal",
        }),
        testEvent("evt_i04", {
          tenantId: "i1",
          createdAt: T0 + 2 * HOUR,
          action: "api_key",
          decision: "allow",
          wouldBeDecision: "deny",
          enforcementMode: "log_only",
          decidedBy: "rule",
        }),
        testEvent("evt_i05", {
          tenantId: "i1",
          createdAt: T0 + 2 * HOUR + 1,
          decision: "challenge",
          wouldBeDecision: "challenge",
          degraded: true,
          decidedBy: "degraded",
          risk: null,
        }),
        testEvent("evt_i99", { tenantId: "i2", createdAt: T0 + 1 }),
      ];
      for (const e of events) await s.events.record(e, undefined);
      const observation = (id: string, eventId: string, outcome: string) => ({
        feedbackId: id,
        tenantId: eventId === "evt_i99" ? "i2" : "i1",
        eventId,
        outcome,
        value: null,
        unit: null,
        source: null,
        observedAt: T0 + 10,
        receivedAt: T0 + 10,
        identity: `identity-${id}`,
      });
      await s.feedback.append(observation("fb_i1", "evt_i01", "converted"), [], undefined);
      await s.feedback.append(observation("fb_i2", "evt_i03", "abuse_confirmed"), [], undefined);
      await s.feedback.append(observation("fb_i3", "evt_i03", "credit_burn"), [], undefined);
      // Quarantined (conflicts with the effective converted): never a label.
      await s.feedback.append(observation("fb_i4", "evt_i01", "abuse_confirmed"), ["converted"], undefined);
      await s.feedback.append(observation("fb_i9", "evt_i99", "abuse_confirmed"), [], undefined);
      const challenge = (id: string, extra: Partial<ChallengeRecord>): ChallengeRecord => ({
        id,
        tenantId: "i1",
        eventId: "evt_i03",
        session: "s-chal",
        method: "proof_of_work",
        difficulty: 4,
        seed: "seed",
        instructions: { type: "pow" },
        issuedAt: T0 + HOUR + 10,
        expiresAt: T0 + HOUR + 1000,
        clearedAt: null,
        redeemedAt: null,
        proofRef: null,
        completionKey: null,
        attempt: null,
        eventDegraded: false,
        ...extra,
      });
      await s.challenges.insert(challenge("chl_i1", {}));
      await s.challenges.insert(
        challenge("chl_i2", { clearedAt: T0 + HOUR + 20, redeemedAt: T0 + HOUR + 30 }),
      );
      await s.challenges.insert(challenge("chl_i3", { expiresAt: T0 + 10 * HOUR }));
    });
    afterAll(() => s.close());

    const all = { since: 0, until: T0 + 10 * HOUR };

    it("counts decisions per hour and combination, only the tenant's, only the period's", async () => {
      const rows = await s.insights.decisionCounts("i1", all, "hour");
      expect(rows.reduce((n, r) => n + r.count, 0)).toBe(5);
      expect(rows.find((r) => r.bucketStart === T0 && r.decision === "allow")?.count).toBe(2);
      expect(rows.find((r) => r.enforcementMode === "log_only")).toMatchObject({
        action: "api_key",
        count: 1,
      });
      expect(rows.find((r) => r.degraded)).toMatchObject({
        bucketStart: T0 + 2 * HOUR,
        decision: "challenge",
      });
      const firstHourOnly = await s.insights.decisionCounts(
        "i1",
        { since: T0 + 2, until: T0 + HOUR + 6 },
        "hour",
      );
      expect(firstHourOnly.reduce((n, r) => n + r.count, 0)).toBe(2);
      const apiKeys = await s.insights.decisionCounts("i1", { ...all, action: "api_key" }, "hour");
      expect(apiKeys.map((r) => r.count)).toEqual([1]);
      // Days are summed from hours: T0 is hour 100, so hours 100–102 fall in day 4 (hours 96–119).
      const days = await s.insights.decisionCounts("i1", all, "day");
      expect(days.every((r) => r.bucketStart === 4 * 24 * HOUR)).toBe(true);
      expect(days.find((r) => r.decision === "allow" && r.enforcementMode === "enforce")?.count).toBe(2);
      expect(days.reduce((n, r) => n + r.count, 0)).toBe(5);
    });

    it("groups the events by what a replay needs, with their labels from effective observations", async () => {
      const groups = await s.insights.riskGroups("i1", all);
      expect(groups.reduce((n, g) => n + g.count, 0)).toBe(5);
      expect(groups.find((g) => g.decidedBy === "degraded")?.risk).toBeNull();
      expect(groups.find((g) => g.decidedBy === "rule")).toMatchObject({ decision: "deny", count: 1 });
      const labelled = await s.insights.labelledRiskGroups("i1", all, ["abuse_confirmed", "credit_burn"]);
      // evt_i01 (converted; its abuse report is quarantined) and evt_i03 (abusive), once each.
      expect(labelled.reduce((n, g) => n + g.count, 0)).toBe(2);
      expect(labelled.find((g) => g.abusive)).toMatchObject({
        decision: "challenge",
        risk: { estimate: 0.7, low: 0.5, high: 0.9, raised: true },
        count: 1,
      });
      expect(labelled.find((g) => !g.abusive)).toMatchObject({ decision: "allow", count: 1 });
    });

    it("adds a long period up whole: events weeks apart are one group and one reason count", async () => {
      const WEEK = 7 * 24 * HOUR;
      await s.tenants.create({ id: "i3", rawPii: false, logOnly: false, createdAt: 1 });
      for (const [i, at] of [T0 + WEEK, T0 + 2 * WEEK + 5, T0 + 3 * WEEK + 9].entries()) {
        const event = testEvent(`evt_w${i}`, {
          tenantId: "i3",
          createdAt: at,
          decision: "deny",
          wouldBeDecision: "deny",
          reasonCodes: ["tls_library", "ua_automation"],
        });
        await s.events.record(event, undefined);
      }
      const span = { since: T0, until: T0 + 4 * WEEK };
      expect((await s.insights.riskGroups("i3", span)).map((g) => g.count)).toEqual([3]);
      expect(await s.insights.reasonCounts("i3", span)).toEqual([
        { code: "tls_library", decision: "deny", count: 3 },
        { code: "ua_automation", decision: "deny", count: 3 },
      ]);
      // A period that starts and ends inside weeks (PostgreSQL's partitions): only what lies in it.
      const inside = { since: T0 + WEEK + 1, until: T0 + 3 * WEEK + 9 };
      expect((await s.insights.riskGroups("i3", inside)).map((g) => g.count)).toEqual([1]);
      expect((await s.insights.reasonCounts("i3", inside)).map((r) => r.count)).toEqual([1, 1]);
    });

    it("crosses effective outcomes with the engine's decision", async () => {
      const rows = await s.insights.outcomeCounts("i1", all);
      expect(rows).toEqual([
        { decision: "allow", outcome: "converted", events: 1, observations: 1 },
        { decision: "challenge", outcome: "abuse_confirmed", events: 1, observations: 1 },
        { decision: "challenge", outcome: "credit_burn", events: 1, observations: 1 },
      ]);
    });

    it("counts challenges by where they ended up", async () => {
      expect(await s.insights.challengeCounts("i1", all, T0 + 5 * HOUR)).toEqual([
        { method: "proof_of_work", issued: 3, cleared: 1, expired: 1, redeemed: 1 },
      ]);
      expect(await s.insights.challengeCounts("i1", { ...all, action: "api_key" }, T0)).toEqual([]);
      expect((await s.insights.challengesForEvent("i1", "evt_i03")).map((c) => c.id)).toEqual([
        "chl_i1",
        "chl_i2",
        "chl_i3",
      ]);
      expect(await s.insights.challengesForEvent("i2", "evt_i03")).toEqual([]);
    });

    it("lists events newest first, filtered, and pages with a cursor", async () => {
      const first = await s.insights.listEvents("i1", all, 2);
      expect(first.map((e) => e.id)).toEqual(["evt_i05", "evt_i04"]);
      const last = first[1] as (typeof first)[number];
      const next = await s.insights.listEvents(
        "i1",
        { ...all, before: { createdAt: last.createdAt, id: last.id } },
        10,
      );
      expect(next.map((e) => e.id)).toEqual(["evt_i03", "evt_i02", "evt_i01"]);
      expect((await s.insights.listEvents("i1", { ...all, session: "s-chal" }, 10)).map((e) => e.id)).toEqual(
        ["evt_i03"],
      );
      expect((await s.insights.listEvents("i1", { ...all, actorType: "agent_abusive" }, 10)).length).toBe(1);
      expect(await s.insights.listEvents("i2", { ...all, session: "s-chal" }, 10)).toEqual([]);
    });

    it("lists what the event list shows, and where its events sit without reading them", async () => {
      const [item] = await s.insights.listEvents("i1", { ...all, session: "s-chal" }, 1);
      expect(item).toEqual({
        id: "evt_i03",
        createdAt: T0 + HOUR + 5,
        action: "signup",
        surface: null,
        session: "s-chal",
        decision: "challenge",
        wouldBeDecision: "challenge",
        actorType: "agent_abusive",
        confidence: 0.5,
        degraded: false,
        enforcementMode: "enforce",
        riskEstimate: 0.7,
      });
      expect((await s.insights.listEvents("i1", all, 1))[0]?.riskEstimate).toBeNull();
      // The third and fourth newest; then past the end of the list.
      expect(await s.insights.eventPositions("i1", all, 2, 2)).toEqual([
        { createdAt: T0 + HOUR + 5, id: "evt_i03" },
        { createdAt: T0 + 2, id: "evt_i02" },
      ]);
      expect(await s.insights.eventPositions("i1", all, 4, 2)).toEqual([
        { createdAt: T0 + 1, id: "evt_i01" },
      ]);
      const after = { ...all, before: { createdAt: T0 + HOUR + 5, id: "evt_i03" } };
      expect(await s.insights.eventPositions("i1", after, 0, 5)).toEqual([
        { createdAt: T0 + 2, id: "evt_i02" },
        { createdAt: T0 + 1, id: "evt_i01" },
      ]);
      // A cursor past the period's end reads from the period's end.
      const early = { ...all, until: T0 + 2, before: { createdAt: T0 + 2 * HOUR, id: "evt_i04" } };
      expect((await s.insights.listEvents("i1", early, 10)).map((e) => e.id)).toEqual(["evt_i01"]);
    });

    it("tells a read's meter the time each of its statements took in the store", async () => {
      const scope = { since: T0, until: T0 + 3 * HOUR };
      const times: number[] = [];
      const meter = (ms: number) => times.push(ms);
      await s.insights.decisionCounts("i1", scope, "hour", meter);
      expect(times).toHaveLength(1);
      await s.insights.attemptCounts("i1", scope, "hour", meter);
      expect(times).toHaveLength(4); // the events, the clears' first verdicts, their re-verifies
      // A filter that matches nothing still took its time.
      await s.insights.listEvents("i1", { ...scope, reasonCode: "no_such_code" }, 10, meter);
      await s.insights.riskGroups("i1", scope, meter);
      expect(times).toHaveLength(6);
      for (const ms of times) expect(ms).toBeGreaterThanOrEqual(0);
      expect(times.every(Number.isFinite)).toBe(true);
    });

    it("keeps a console session until it expires or is deleted", async () => {
      await s.apiKeys.create(
        {
          id: "key_i",
          tenantId: "i1",
          scopes: ["ledger:read"],
          logOnly: false,
          createdAt: 1,
          revokedAt: null,
        },
        "hash-i",
      );
      const session = { idHash: "h1", tenantId: "i1", keyId: "key_i", createdAt: 10, expiresAt: 100 };
      await s.consoleSessions.create(session);
      expect(await s.consoleSessions.find("h1", 50)).toMatchObject({
        session,
        tenant: { id: "i1" },
        key: { id: "key_i" },
      });
      expect(await s.consoleSessions.find("h1", 100)).toBeUndefined();
      expect(await s.consoleSessions.delete("h1")).toBe(true);
      expect(await s.consoleSessions.find("h1", 50)).toBeUndefined();
      await s.consoleSessions.create({ ...session, idHash: "h2" });
      expect(await s.consoleSessions.purgeExpired(100)).toBe(1);
    });
  });
}
