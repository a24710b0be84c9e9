import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRecord } from "../../domain.js";
import type { MarkCount, Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

const HOUR = 3_600_000;
const T0 = 200 * HOUR;
const ENV_A = "a".repeat(32);
const ENV_B = "b".repeat(32);
const JA4 = "t13d1516h2_8daaf6152771_02713d6af862";
// LIKE's own characters and JSON's escapes: each must match only itself.
const UA = 'Bot "x" 100%_ok\\';
const UA_NEAR = 'Bot "x" 100%Xok\\';
const ABUSE = ["abuse_confirmed", "multi_account_cluster", "credit_burn", "chargeback"];
const GOOD = ["converted", "false_positive"];

function campaignEvent(
  id: string,
  n: number,
  signals: Record<string, unknown>,
  extra: Partial<EventRecord> = {},
) {
  const network = `198.51.${n}.0/24`;
  return testEvent(id, {
    tenantId: "c1",
    createdAt: T0 + n * 1000,
    signals: { ipNetwork: network, ...signals },
    network,
    ...extra,
  });
}

/**
 * The console's campaigns (InsightStore.abusiveSetups and markCounts), the same on every adapter: a
 * tenant "c1" whose attempts share a page environment, a JA4, a user agent and an email domain, some
 * labelled, and a tenant "c2" whose events never show.
 */
export function campaignContract(name: string, open: () => Promise<Store>): void {
  describe(`campaign store contract: ${name}`, () => {
    let s: Store;
    beforeAll(async () => {
      s = await open();
      for (const id of ["c1", "c2"])
        await s.tenants.create({ id, rawPii: false, logOnly: false, createdAt: 1 });
      const shared = { environment: ENV_A, tls: JA4, userAgent: UA };
      const events = [
        campaignEvent(
          "evt_c01",
          1,
          { ...shared, emailDomain: "mail.spam.example", shape: "c".repeat(32) },
          {
            decision: "deny",
            wouldBeDecision: "deny",
          },
        ),
        campaignEvent("evt_c02", 2, { ...shared, emailDomain: "spam.example", shape: "c".repeat(32) }),
        campaignEvent("evt_c03", 3, { ...shared, emailDomain: "good.example" }),
        campaignEvent("evt_c04", 4, {
          environment: ENV_A,
          tls: null,
          userAgent: UA_NEAR,
          emailDomain: "spam.example",
        }),
        campaignEvent("evt_c05", 5, {
          environment: ENV_B,
          tls: JA4,
          userAgent: null,
          emailDomain: "notspam.example",
        }),
        // A re-verify whose honoured clear stood in for scoring: not an attempt of its own.
        campaignEvent("evt_c06", 6, shared, { decidedBy: "clear", risk: null }),
        // Out of the period.
        campaignEvent("evt_c07", 7, shared, { createdAt: T0 + 20 * HOUR }),
        testEvent("evt_c99", {
          tenantId: "c2",
          createdAt: T0 + 1,
          signals: { ...shared, ipNetwork: "198.51.1.0/24" },
          network: "198.51.1.0/24",
        }),
      ];
      for (const e of events) await s.events.record(e, undefined);
      const observation = (id: string, eventId: string, outcome: string) => ({
        feedbackId: id,
        tenantId: eventId === "evt_c99" ? "c2" : "c1",
        eventId,
        outcome,
        value: null,
        unit: null,
        source: null,
        observedAt: T0 + HOUR,
        receivedAt: T0 + HOUR,
        identity: `identity-${id}`,
      });
      await s.feedback.append(observation("fb_c1", "evt_c01", "abuse_confirmed"), [], undefined);
      await s.feedback.append(observation("fb_c2", "evt_c02", "multi_account_cluster"), [], undefined);
      await s.feedback.append(observation("fb_c3", "evt_c03", "converted"), [], undefined);
      // Quarantined (contradicts the effective converted): never a label.
      await s.feedback.append(observation("fb_c4", "evt_c03", "abuse_confirmed"), ["converted"], undefined);
      await s.feedback.append(observation("fb_c5", "evt_c06", "abuse_confirmed"), [], undefined);
      await s.feedback.append(observation("fb_c6", "evt_c07", "abuse_confirmed"), [], undefined);
      await s.feedback.append(observation("fb_c9", "evt_c99", "abuse_confirmed"), [], undefined);
    });
    afterAll(() => s.close());

    const period = { since: T0, until: T0 + 10 * HOUR };
    const total = (counts: MarkCount[], kind: string, value: string) => {
      const mine = counts.filter((c) => c.kind === kind && c.value === value);
      return {
        events: mine.reduce((n, c) => n + c.events, 0),
        abusive: mine.reduce((n, c) => n + c.abusive, 0),
        good: mine.reduce((n, c) => n + c.good, 0),
        firstSeen: Math.min(...mine.map((c) => c.firstSeen)),
        lastSeen: Math.max(...mine.map((c) => c.lastSeen)),
      };
    };

    it("abusive setups: the period's attempts with an effective abuse outcome, newest first, with their marks", async () => {
      const setups = await s.insights.abusiveSetups("c1", period, ABUSE, 100);
      expect(setups.map((x) => x.eventId)).toEqual(["evt_c02", "evt_c01"]);
      expect(setups[1]).toEqual({
        eventId: "evt_c01",
        createdAt: T0 + 1000,
        marks: expect.arrayContaining([
          { kind: "environment", value: ENV_A },
          { kind: "shape", value: "c".repeat(32) },
          { kind: "tls", value: JA4 },
          { kind: "userAgent", value: UA },
          { kind: "emailDomain", value: "mail.spam.example" },
          { kind: "network", value: "198.51.1.0/24" },
        ]),
      });
      expect(setups[1]?.marks).toHaveLength(6);
      expect((await s.insights.abusiveSetups("c1", period, ABUSE, 1)).map((x) => x.eventId)).toEqual([
        "evt_c02",
      ]);
      expect(await s.insights.abusiveSetups("c1", period, [], 100)).toEqual([]);
    });

    it("abusive setups never show another tenant's events, nor those out of the period or of another action", async () => {
      expect((await s.insights.abusiveSetups("c2", period, ABUSE, 100)).map((x) => x.eventId)).toEqual([
        "evt_c99",
      ]);
      expect(
        await s.insights.abusiveSetups("c1", { since: T0 + 10 * HOUR, until: T0 + 30 * HOUR }, ABUSE, 100),
      ).toEqual([expect.objectContaining({ eventId: "evt_c07" })]);
      expect(await s.insights.abusiveSetups("c1", { ...period, action: "login" }, ABUSE, 100)).toEqual([]);
    });

    it("mark counts: attempts bearing each value, with their abuse and good labels, first and last seen", async () => {
      const counts = await s.insights.markCounts(
        "c1",
        period,
        [
          { kind: "environment", value: ENV_A },
          { kind: "tls", value: JA4 },
          { kind: "network", value: "198.51.2.0/24" },
          { kind: "shape", value: "c".repeat(32) },
        ],
        { abuse: ABUSE, good: GOOD },
      );
      // evt_c06 (a re-verify) and evt_c07 (out of the period) are not counted; evt_c03's quarantined
      // abuse does not label it, its converted does.
      expect(total(counts, "environment", ENV_A)).toEqual({
        events: 4,
        abusive: 2,
        good: 1,
        firstSeen: T0 + 1000,
        lastSeen: T0 + 4000,
      });
      expect(total(counts, "tls", JA4)).toMatchObject({ events: 4, abusive: 2, good: 1 });
      expect(total(counts, "network", "198.51.2.0/24")).toMatchObject({ events: 1, abusive: 1, good: 0 });
      expect(total(counts, "shape", "c".repeat(32))).toMatchObject({ events: 2, abusive: 2 });
      // Per decision: evt_c01 was denied.
      expect(counts.find((c) => c.kind === "environment" && c.decision === "deny")).toMatchObject({
        events: 1,
      });
    });

    it("mark counts: a user agent matches only itself, LIKE's characters and JSON's escapes included", async () => {
      const counts = await s.insights.markCounts("c1", period, [{ kind: "userAgent", value: UA }], {
        abuse: ABUSE,
        good: GOOD,
      });
      expect(total(counts, "userAgent", UA)).toMatchObject({ events: 3, abusive: 2, good: 1 });
      const near = await s.insights.markCounts("c1", period, [{ kind: "userAgent", value: UA_NEAR }], {
        abuse: ABUSE,
        good: GOOD,
      });
      expect(total(near, "userAgent", UA_NEAR)).toMatchObject({ events: 1, abusive: 0 });
      const none = await s.insights.markCounts("c1", period, [{ kind: "userAgent", value: "Bot" }], {
        abuse: ABUSE,
        good: GOOD,
      });
      expect(none).toEqual([]);
    });

    it("mark counts: an email domain counts its subdomains, as a deny list matches them, and no lookalike", async () => {
      const counts = await s.insights.markCounts(
        "c1",
        period,
        [
          { kind: "emailDomain", value: "spam.example" },
          { kind: "emailDomain", value: "mail.spam.example" },
        ],
        { abuse: ABUSE, good: GOOD },
      );
      // evt_c05's notspam.example is no subdomain of spam.example.
      expect(total(counts, "emailDomain", "spam.example")).toMatchObject({ events: 3, abusive: 2 });
      expect(total(counts, "emailDomain", "mail.spam.example")).toMatchObject({ events: 1, abusive: 1 });
    });

    it("mark counts read only the tenant's events", async () => {
      const counts = await s.insights.markCounts("c2", period, [{ kind: "environment", value: ENV_A }], {
        abuse: ABUSE,
        good: GOOD,
      });
      expect(total(counts, "environment", ENV_A)).toMatchObject({ events: 1, abusive: 1 });
      expect(await s.insights.markCounts("c1", period, [], { abuse: ABUSE, good: GOOD })).toEqual([]);
    });
  });
}
