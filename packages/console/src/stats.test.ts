import { describe, expect, it } from "vitest";
import { parseHash } from "./router.js";
import { attemptTotals, breakdownBy, bucketSeries, decisionByMode, flagOf, totals } from "./stats.js";
import type { DecisionRow } from "./types.js";

const row = (over: Partial<DecisionRow>): DecisionRow => ({
  bucketStart: "2026-11-24T10:00:00.000Z",
  action: "signup",
  decision: "allow",
  actorType: "human",
  degraded: false,
  enforcementMode: "enforce",
  count: 1,
  ...over,
});

const rows = [
  row({ count: 12 }),
  row({ decision: "challenge", actorType: "unknown", count: 3 }),
  row({ decision: "challenge", actorType: "unknown", degraded: true, count: 2 }),
  row({ bucketStart: "2026-11-24T12:00:00.000Z", action: "login", decision: "deny", count: 1 }),
  row({
    bucketStart: "2026-11-24T12:00:00.000Z",
    enforcementMode: "log_only",
    actorType: "agent_abusive",
    count: 4,
  }),
];

describe("the overview's sums", () => {
  it("totals by decision, degraded and log-only", () => {
    expect(totals(rows)).toEqual({ total: 22, allow: 16, challenge: 5, deny: 1, degraded: 2, logOnly: 4 });
  });

  it("totals attempts by how they ended, degraded first verdicts apart", () => {
    const at = (
      ending: "allowed" | "cleared" | "challenged" | "denied",
      count: number,
      degraded = false,
    ) => ({
      bucketStart: "2026-11-24T10:00:00.000Z",
      action: "signup",
      ending,
      degraded,
      count,
    });
    expect(
      attemptTotals([
        at("allowed", 10),
        at("cleared", 3),
        at("cleared", 1, true),
        at("challenged", 2),
        at("denied", 1),
      ]),
    ).toEqual({
      total: 17,
      allowed: 10,
      cleared: 4,
      challenged: 2,
      denied: 1,
      degraded: 1,
    });
  });

  it("breaks down by a column, largest first", () => {
    expect(breakdownBy(rows, (r) => r.action)).toEqual([
      { key: "signup", total: 21, allow: 16, challenge: 5, deny: 0 },
      { key: "login", total: 1, allow: 0, challenge: 0, deny: 1 },
    ]);
  });

  it("counts decision × enforcement mode with zeros where nothing fell", () => {
    expect(decisionByMode(rows, ["enforce", "log_only"])).toEqual([
      { decision: "allow", counts: { enforce: 12, log_only: 4 }, total: 16 },
      { decision: "challenge", counts: { enforce: 5, log_only: 0 }, total: 5 },
      { decision: "deny", counts: { enforce: 1, log_only: 0 }, total: 1 },
    ]);
  });

  it("fills every hour of the range for the chart and keeps only non-empty buckets for the table", () => {
    const b = bucketSeries(rows, "2026-11-24T09:30:00.000Z", "2026-11-24T13:10:00.000Z", "hour");
    expect(b.xs.map((x) => new Date(x * 1000).toISOString().slice(11, 16))).toEqual([
      "09:00",
      "10:00",
      "11:00",
      "12:00",
      "13:00",
    ]);
    expect(b.counts.allow).toEqual([0, 12, 0, 4, 0]);
    expect(b.counts.challenge).toEqual([0, 5, 0, 0, 0]);
    expect(b.counts.deny).toEqual([0, 0, 0, 1, 0]);
    expect(b.nonEmpty.map((n) => n.total)).toEqual([17, 5]);
  });
});

describe("outcome flags", () => {
  it("names misses and friction, nothing else", () => {
    expect(flagOf("allow", "abuse_confirmed")).toBe("missed");
    expect(flagOf("allow", "chargeback")).toBe("missed");
    expect(flagOf("challenge", "converted")).toBe("friction");
    expect(flagOf("deny", "false_positive")).toBe("friction");
    expect(flagOf("allow", "converted")).toBeNull();
    expect(flagOf("deny", "abuse_confirmed")).toBeNull();
  });
});

describe("hash routes", () => {
  it("parses every page, a session search and an event, and falls back to the overview", () => {
    expect(parseHash("")).toEqual({ page: "overview" });
    expect(parseHash("#main")).toEqual({ page: "overview" });
    expect(parseHash("#/what-if")).toEqual({ page: "what-if" });
    expect(parseHash("#/events?session=a%20b")).toEqual({ page: "events", session: "a b" });
    expect(parseHash("#/events/evt_1")).toEqual({ page: "event", eventId: "evt_1" });
    expect(parseHash("#/nope")).toEqual({ page: "not-found", path: "/nope" });
  });
});
