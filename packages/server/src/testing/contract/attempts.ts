import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRecord } from "../../domain.js";
import type { ChallengeRecord, Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

const HOUR = 3_600_000;
const T0 = 200 * HOUR;

/**
 * Attempts (docs/api.md, "Attempts"), the same on every adapter: a tenant "a1" with an attempt allowed
 * at once, one denied, one challenged and abandoned, one challenged whose clear a re-verify redeemed
 * (in the next hour), one whose first verdict was degraded and whose clear a scored re-verify
 * redeemed, and one whose first verdict was degraded and whose solved challenge let a re-verify be
 * scored that was a deny (the clear spent with it). Tenant "a2" has the same event ids' look-alikes
 * and never shows.
 */
export function attemptContract(name: string, open: () => Promise<Store>): void {
  describe(`attempts: ${name}`, () => {
    let s: Store;
    const risk = (estimate: number) => ({
      estimate,
      low: estimate - 0.1,
      high: estimate + 0.1,
      raised: false,
    });
    const event = (id: string, at: number, extra: Partial<EventRecord>) =>
      testEvent(id, {
        tenantId: "a1",
        createdAt: T0 + at,
        session: `s-${id}`,
        attempt: `att-${id}`,
        ...extra,
      });
    const challenge = (id: string, eventId: string, at: number, eventDegraded: boolean): ChallengeRecord => ({
      id,
      tenantId: "a1",
      eventId,
      session: `s-${eventId}`,
      method: "proof_of_work",
      difficulty: 4,
      seed: "seed",
      instructions: { type: "pow" },
      issuedAt: T0 + at,
      expiresAt: T0 + at + 2 * HOUR,
      clearedAt: null,
      redeemedAt: null,
      proofRef: null,
      completionKey: null,
      attempt: `att-${eventId}`,
      eventDegraded,
    });
    /** A re-verify of `first` that redeems the clear of `challengeId` (written as verify writes it). */
    const redeem = async (
      id: string,
      first: string,
      challengeId: string,
      at: number,
      extra: Partial<EventRecord>,
    ) => {
      await s.challenges.clear("a1", challengeId, `s-${first}`, T0 + at - 1);
      const outcome = await s.events.record(
        event(id, at, { session: `s-${first}`, attempt: `att-${first}`, decision: "allow", ...extra }),
        undefined,
        undefined,
        {
          redeem: {
            challengeId,
            eventId: first,
            session: `s-${first}`,
            attempt: `att-${first}`,
            clearedSince: T0,
          },
        },
      );
      expect(outcome).toEqual({ kind: "recorded" });
    };
    const observe = (id: string, eventId: string, outcome: string) =>
      s.feedback.append(
        {
          feedbackId: id,
          tenantId: eventId.startsWith("evt_b") ? "a2" : "a1",
          eventId,
          outcome,
          value: null,
          unit: null,
          source: null,
          observedAt: T0 + 5 * HOUR,
          receivedAt: T0 + 5 * HOUR,
          identity: `identity-${id}`,
        },
        [],
        undefined,
      );

    beforeAll(async () => {
      s = await open();
      for (const id of ["a1", "a2"])
        await s.tenants.create({ id, rawPii: false, logOnly: false, createdAt: 1 });
      const firsts = [
        event("evt_a_allow", 1, { risk: risk(0.05) }),
        event("evt_a_deny", 2, { decision: "deny", wouldBeDecision: "deny", risk: risk(0.95) }),
        event("evt_a_gone", 3, { decision: "challenge", wouldBeDecision: "challenge", risk: risk(0.55) }),
        event("evt_a_chal", 4, { decision: "challenge", wouldBeDecision: "challenge", risk: risk(0.65) }),
        event("evt_a_degr", 5, {
          decision: "challenge",
          wouldBeDecision: "challenge",
          degraded: true,
          decidedBy: "degraded",
          risk: null,
        }),
        event("evt_a_degd", 6, {
          decision: "challenge",
          wouldBeDecision: "challenge",
          degraded: true,
          decidedBy: "degraded",
          risk: null,
        }),
        testEvent("evt_b_chal", { tenantId: "a2", createdAt: T0 + 4, decision: "challenge" }),
      ];
      for (const e of firsts) await s.events.record(e, undefined);
      await s.challenges.insert(challenge("chl_a_gone", "evt_a_gone", 10, false));
      await s.challenges.insert(challenge("chl_a_chal", "evt_a_chal", 10, false));
      await s.challenges.insert(challenge("chl_a_degr", "evt_a_degr", 10, true));
      await s.challenges.insert(challenge("chl_a_degd", "evt_a_degd", 10, true));
      // The honoured clear stands in for scoring: no risk of its own, decided by the clear.
      await redeem("evt_a_rev", "evt_a_chal", "chl_a_chal", HOUR + 30, {
        actorType: "unknown",
        decidedBy: "clear",
        risk: null,
        signals: { challengeId: "chl_a_chal" },
      });
      // After a degraded first verdict the re-verify is scored: it holds the attempt's risk.
      await redeem("evt_a_deg_rev", "evt_a_degr", "chl_a_degr", 40, {
        decidedBy: "clear",
        wouldBeDecision: "challenge",
        risk: risk(0.45),
        signals: { challengeId: "chl_a_degr" },
      });
      // After a degraded first verdict the scored re-verify is the attempt's, a deny too: it spends the clear.
      await redeem("evt_a_degd_rev", "evt_a_degd", "chl_a_degd", 50, {
        decision: "deny",
        wouldBeDecision: "deny",
        decidedBy: "model",
        risk: risk(0.9),
        signals: { challengeId: "chl_a_degd" },
      });
      await observe("fb_a_rev", "evt_a_rev", "abuse_confirmed");
      await observe("fb_a_degd", "evt_a_degd", "abuse_confirmed");
      await observe("fb_a_deg", "evt_a_degr", "converted");
      await observe("fb_a_allow", "evt_a_allow", "converted");
      await observe("fb_b", "evt_b_chal", "abuse_confirmed");
    });
    afterAll(() => s.close());

    const all = { since: T0, until: T0 + 10 * HOUR };

    it("an attempt is its first verdict and the re-verify that redeemed its clear, from either event", async () => {
      for (const id of ["evt_a_chal", "evt_a_rev"]) {
        expect(await s.insights.attemptOf("a1", id)).toEqual({
          firstEventId: "evt_a_chal",
          reverifyEventId: "evt_a_rev",
        });
      }
      for (const id of ["evt_a_degd", "evt_a_degd_rev"]) {
        expect(await s.insights.attemptOf("a1", id)).toEqual({
          firstEventId: "evt_a_degd",
          reverifyEventId: "evt_a_degd_rev",
        });
      }
      expect(await s.insights.attemptOf("a1", "evt_a_gone")).toEqual({
        firstEventId: "evt_a_gone",
        reverifyEventId: null,
      });
      expect(await s.insights.attemptOf("a1", "evt_b_chal")).toBeUndefined();
      expect(await s.insights.attemptOf("a1", "evt_none")).toBeUndefined();
    });

    it("counts attempts by how they ended, in the hour of their first verdict; a re-verify is no attempt", async () => {
      const rows = await s.insights.attemptCounts("a1", all, "hour");
      const firstHour = { bucketStart: T0, action: "signup" };
      expect(rows).toEqual([
        { ...firstHour, ending: "allowed", degraded: false, count: 1 },
        { ...firstHour, ending: "cleared", degraded: false, count: 1 },
        { ...firstHour, ending: "cleared", degraded: true, count: 1 },
        { ...firstHour, ending: "challenged", degraded: false, count: 1 },
        { ...firstHour, ending: "denied", degraded: false, count: 1 },
        { ...firstHour, ending: "denied", degraded: true, count: 1 },
      ]);
      const days = await s.insights.attemptCounts("a1", all, "day");
      expect(days.reduce((n, r) => n + r.count, 0)).toBe(6);
      expect(days.every((r) => r.bucketStart === Math.floor(T0 / (24 * HOUR)) * 24 * HOUR)).toBe(true);
      expect(await s.insights.attemptCounts("a1", { ...all, action: "api_key" }, "hour")).toEqual([]);
    });

    it("replays each attempt once, with the risk of its first scored verdict", async () => {
      const groups = await s.insights.riskGroups("a1", all);
      const estimates = groups.map((g) => g.risk?.estimate ?? null).sort();
      // evt_a_rev (the clear stood in), evt_a_degr and evt_a_degd (degraded, their re-verifies scored)
      // are not counted.
      expect(estimates).toEqual([0.05, 0.45, 0.55, 0.65, 0.9, 0.95].sort());
      expect(groups.reduce((n, g) => n + g.count, 0)).toBe(6);
    });

    it("feedback on any event of an attempt labels the attempt", async () => {
      const labelled = await s.insights.labelledRiskGroups("a1", all, ["abuse_confirmed"]);
      const byRisk = Object.fromEntries(labelled.map((g) => [String(g.risk?.estimate ?? null), g.abusive]));
      // Abuse reported on the re-verify labels the challenged first verdict (risk 0.65); a conversion
      // reported on the degraded first verdict labels its scored re-verify (risk 0.45), and abuse
      // reported on the other degraded first verdict labels the deny its re-verify was (risk 0.9).
      expect(byRisk).toEqual({ "0.05": false, "0.45": false, "0.65": true, "0.9": true });
      const outcomes = await s.insights.outcomeCounts("a1", all);
      expect(outcomes).toEqual(
        expect.arrayContaining([
          { decision: "challenge", outcome: "abuse_confirmed", events: 1, observations: 1 },
          { decision: "challenge", outcome: "converted", events: 1, observations: 1 },
          { decision: "allow", outcome: "converted", events: 1, observations: 1 },
          { decision: "deny", outcome: "abuse_confirmed", events: 1, observations: 1 },
        ]),
      );
      expect(outcomes).toHaveLength(4);
    });
  });
}
