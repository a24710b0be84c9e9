import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRecord } from "../../domain.js";
import { sha256Hex } from "../../lib/crypto.js";
import type { EventListFilter, Store } from "../../store/interfaces.js";
import { testEvent } from "../harness.js";

const T0 = 500 * 3_600_000;
const ALL = { since: 0, until: T0 + 3_600_000 };
const ALICE = sha256Hex("alice@example.com");
const BOB = sha256Hex("bob@example.com");
const NET_A = "198.51.100.0/24";
const NET_B = "2001:db8:1::/48";

/**
 * Finding a person (InsightStore.listEvents, eventPositions, reasonCounts, knownActions), the same
 * on every adapter: tenant "q1" with events of two addresses, two networks and reason codes written by
 * every insert path (plain, keyed, key-conditional), and tenant "q2" whose events never show.
 */
export function eventSearchContract(name: string, open: () => Promise<Store>): void {
  describe(`event search contract: ${name}`, () => {
    let s: Store;
    const event = (id: string, at: number, extra: Partial<EventRecord>) =>
      testEvent(id, { tenantId: "q1", keyId: "key_q1", createdAt: T0 + at, network: null, ...extra });
    beforeAll(async () => {
      s = await open();
      for (const id of ["q1", "q2"])
        await s.tenants.create({ id, rawPii: false, logOnly: false, createdAt: 1 });
      const key = { scopes: ["verify:write" as const], logOnly: false, createdAt: 1, revokedAt: null };
      await s.apiKeys.create({ ...key, tenantId: "q1", id: "key_q1" }, "hash-q1");
      await s.apiKeys.create({ ...key, tenantId: "q2", id: "key_q2" }, "hash-q2");
      await s.events.record(
        event("evt_q01", 1, {
          emailHash: ALICE,
          network: NET_A,
          decision: "deny",
          wouldBeDecision: "deny",
          reasonCodes: ["ua_automation", "risk_estimate"],
        }),
        undefined,
      );
      // Keyed (an Idempotency-Key claims it in the same write).
      await s.events.record(
        event("evt_q02", 2, { emailHash: ALICE, network: NET_B, reasonCodes: ["risk_estimate"] }),
        {
          tenantId: "q1",
          operation: "verify",
          key: "k-q02",
          response: { fingerprint: "f", statusCode: 200, body: {} },
          expiresAt: T0 * 2,
        },
      );
      // Conditional on the API key (verify's path: PostgreSQL batches it).
      await s.events.record(
        event("evt_q03", 3, {
          emailHash: BOB,
          network: NET_A,
          decision: "challenge",
          wouldBeDecision: "challenge",
          degraded: true,
          decidedBy: "degraded",
          risk: null,
          // A code given twice counts once.
          reasonCodes: ["degraded", "degraded"],
        }),
        undefined,
        undefined,
        { activeKey: true },
      );
      // As events recorded before reason codes were kept: none.
      await s.events.record(event("evt_q04", 4, { action: "api_key", reasonCodes: [] }), undefined);
      for (let i = 0; i < 7; i++) {
        await s.events.record(
          event(`evt_q1${i}`, 10 + (i % 3), {
            emailHash: BOB,
            reasonCodes: ["email_random", "risk_estimate"],
          }),
          undefined,
        );
      }
      await s.events.record(
        testEvent("evt_q99", {
          tenantId: "q2",
          keyId: "key_q2",
          createdAt: T0 + 1,
          emailHash: ALICE,
          network: NET_A,
          action: "q2_action",
          reasonCodes: ["ua_automation"],
        }),
        undefined,
      );
    });
    afterAll(() => s.close());

    const ids = async (filter: Partial<EventListFilter>, tenantId = "q1") =>
      (await s.insights.listEvents(tenantId, { ...ALL, ...filter }, 100)).map((e) => e.id);

    it("an email hash finds exactly that address's events, newest first, never another tenant's", async () => {
      expect(await ids({ emailHash: ALICE })).toEqual(["evt_q02", "evt_q01"]);
      expect(await ids({ emailHash: ALICE }, "q2")).toEqual(["evt_q99"]);
      expect(await ids({ emailHash: sha256Hex("nobody@example.com") })).toEqual([]);
    });

    it("a network finds the events of that truncated network", async () => {
      expect(await ids({ network: NET_A })).toEqual(["evt_q03", "evt_q01"]);
      expect(await ids({ network: NET_B })).toEqual(["evt_q02"]);
    });

    it("a reason code finds the events that gave it, written by every insert path", async () => {
      expect(await ids({ reasonCode: "ua_automation" })).toEqual(["evt_q01"]);
      expect(await ids({ reasonCode: "degraded" })).toEqual(["evt_q03"]);
      expect((await ids({ reasonCode: "risk_estimate" })).sort()).toEqual(
        ["evt_q01", "evt_q02", ...Array.from({ length: 7 }, (_, i) => `evt_q1${i}`)].sort(),
      );
      expect(await ids({ reasonCode: "tls_library" })).toEqual([]);
    });

    it("a reason code matches only itself: never inside a longer code, its _ never another character", async () => {
      await s.tenants.create({ id: "q3", rawPii: false, logOnly: false, createdAt: 1 });
      const record = (id: string, reasonCodes: string[]) =>
        s.events.record(testEvent(id, { tenantId: "q3", createdAt: T0 + 1, reasonCodes }), undefined);
      await record("evt_q31", ["challenge_cleared_after_degraded"]);
      await record("evt_q32", ["tlsxunfamiliar"]);
      expect(await ids({ reasonCode: "challenge_cleared_after_degraded" }, "q3")).toEqual(["evt_q31"]);
      expect(await ids({ reasonCode: "degraded" }, "q3")).toEqual([]);
      expect(await ids({ reasonCode: "challenge_cleared" }, "q3")).toEqual([]);
      expect(await ids({ reasonCode: "tls_unfamiliar" }, "q3")).toEqual([]);
      expect(await s.insights.reasonCounts("q3", ALL)).toEqual([
        { code: "challenge_cleared_after_degraded", decision: "allow", count: 1 },
        { code: "tlsxunfamiliar", decision: "allow", count: 1 },
      ]);
    });

    it("filters combine: a code with an email, a decision, an action or the period", async () => {
      expect(await ids({ reasonCode: "risk_estimate", emailHash: ALICE })).toEqual(["evt_q02", "evt_q01"]);
      expect(await ids({ reasonCode: "risk_estimate", decision: "deny" })).toEqual(["evt_q01"]);
      expect(await ids({ reasonCode: "risk_estimate", network: NET_B })).toEqual(["evt_q02"]);
      expect(await ids({ reasonCode: "risk_estimate", action: "api_key" })).toEqual([]);
      expect(await ids({ emailHash: BOB, since: T0 + 10, until: T0 + 11 })).toHaveLength(3);
      expect(await ids({ emailHash: ALICE, network: NET_A })).toEqual(["evt_q01"]);
    });

    it("degraded=true finds only degraded events, degraded=false the rest", async () => {
      expect(await ids({ degraded: true })).toEqual(["evt_q03"]);
      expect(await ids({ degraded: false })).toHaveLength(10);
    });

    it("pages of a search after a cursor give every event once, in order, by code and by email", async () => {
      for (const filter of [
        { reasonCode: "email_random" },
        { emailHash: BOB },
        { reasonCode: "email_random", emailHash: BOB },
      ]) {
        const whole = await ids(filter);
        const seen: string[] = [];
        let before: EventListFilter["before"];
        for (;;) {
          const page = await s.insights.listEvents(
            "q1",
            { ...ALL, ...filter, ...(before ? { before } : {}) },
            3,
          );
          seen.push(...page.map((e) => e.id));
          const last = page[page.length - 1];
          if (page.length < 3 || !last) break;
          before = { createdAt: last.createdAt, id: last.id };
        }
        expect(seen).toEqual(whole);
        expect(whole.length).toBeGreaterThanOrEqual(7);
        const positions = await s.insights.eventPositions("q1", { ...ALL, ...filter }, 2, 3);
        expect(positions.map((p) => p.id)).toEqual(whole.slice(2, 5));
      }
    });

    it("counts events per reason code and decision, each event once per code, only the tenant's", async () => {
      const counts = await s.insights.reasonCounts("q1", ALL);
      const get = (code: string, decision: string) =>
        counts.find((c) => c.code === code && c.decision === decision)?.count;
      expect(get("risk_estimate", "allow")).toBe(8);
      expect(get("risk_estimate", "deny")).toBe(1);
      expect(get("degraded", "challenge")).toBe(1);
      expect(get("ua_automation", "deny")).toBe(1);
      expect(get("email_random", "allow")).toBe(7);
      expect(counts.reduce((n, c) => n + c.count, 0)).toBe(8 + 1 + 1 + 1 + 7);
      expect(counts[0]).toMatchObject({ code: "risk_estimate", decision: "allow" });
      expect(await s.insights.reasonCounts("q1", { ...ALL, action: "api_key" })).toEqual([]);
      expect(await s.insights.reasonCounts("q1", { since: T0 + 3, until: T0 + 4 })).toEqual([
        { code: "degraded", decision: "challenge", count: 1 },
      ]);
    });

    it("an event written again (a retried write) is counted once", async () => {
      await s.events.record(
        event("evt_q01", 1, {
          emailHash: ALICE,
          network: NET_A,
          decision: "deny",
          reasonCodes: ["ua_automation"],
        }),
        undefined,
      );
      const counts = await s.insights.reasonCounts("q1", ALL);
      expect(counts.find((c) => c.code === "ua_automation")?.count).toBe(1);
    });

    it("lists the tenant's actions once each, in order, never another tenant's", async () => {
      expect(await s.insights.knownActions("q1")).toEqual(["api_key", "signup"]);
      expect(await s.insights.knownActions("q2")).toEqual(["q2_action"]);
      expect(await s.insights.knownActions("nobody")).toEqual([]);
    });
  });
}
