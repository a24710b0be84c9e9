import { describe, expect, it } from "vitest";
import {
  type CampaignResult,
  campaignPlan,
  campaignTotals,
  count,
  formatCampaignTable,
  noCounts,
} from "./lib/campaign.mjs";
import { campaignClasses } from "./lib/campaignRun.mjs";

/**
 * Campaign mode's plan, tally and table (`npm run eval:real -- --campaign …`), without a browser,
 * a server or a clock: what runs in which order, and how the goals (at most 20% of a campaign's
 * signups, 10% across campaigns, create an account) are read.
 */
const PEOPLE = ["person-chromium-xdotool", "person-model-safari-ios", "person-model-firefox"];

function result(
  id: string,
  outcomes: ("allowed" | "challenged" | "denied")[],
  created: number,
): CampaignResult {
  const campaign = noCounts();
  outcomes.forEach((first, i) => {
    count(campaign, { first, created: i < created, humanFirst: false });
  });
  const before = noCounts();
  count(before, { first: "allowed", created: true, humanFirst: true });
  return {
    id,
    label: id,
    ja4: true,
    campaign,
    before,
    after: noCounts(),
    ms: 120_000,
    seconds: 200,
    errors: [],
    ja4Seen: new Set(),
    reasons: new Map(),
  };
}

describe("campaign plan", () => {
  it("people before, the campaign's signups paced over the spread, people after", () => {
    const plan = campaignPlan({
      campaign: "impit-chrome151",
      size: 30,
      people: 4,
      peopleClasses: PEOPLE,
      spreadMs: 180_000,
    });
    expect(plan).toHaveLength(38);
    expect(plan.slice(0, 4).every((s) => s.phase === "before")).toBe(true);
    expect(plan.slice(34).every((s) => s.phase === "after")).toBe(true);
    const campaign = plan.filter((s) => s.phase === "campaign");
    expect(campaign).toHaveLength(30);
    expect(campaign.every((s) => s.client === "impit-chrome151")).toBe(true);
    expect(campaign.map((s) => s.at)).toEqual(Array.from({ length: 30 }, (_, i) => i * 6000));
  });

  it("the real person comes first and the rotation goes on after the campaign", () => {
    const plan = campaignPlan({ campaign: "x", size: 1, people: 2, peopleClasses: PEOPLE, spreadMs: 0 });
    expect(plan.map((s) => s.client)).toEqual([
      "person-chromium-xdotool",
      "person-model-safari-ios",
      "x",
      "person-model-firefox",
      "person-chromium-xdotool",
    ]);
  });

  it("no people: the campaign alone; a campaign needs a signup, people need a class", () => {
    expect(campaignPlan({ campaign: "x", size: 2, people: 0, peopleClasses: [], spreadMs: 10 })).toEqual([
      { phase: "campaign", client: "x", at: 0 },
      { phase: "campaign", client: "x", at: 5 },
    ]);
    expect(() =>
      campaignPlan({ campaign: "x", size: 0, people: 0, peopleClasses: [], spreadMs: 0 }),
    ).toThrow();
    expect(() =>
      campaignPlan({ campaign: "x", size: 1, people: 1, peopleClasses: [], spreadMs: 0 }),
    ).toThrow();
  });

  it("a prefix names each bot class it matches; a people class or an unknown id is refused", () => {
    expect(campaignClasses(["impit"]).map((c) => c.id)).toEqual([
      "impit-chrome151",
      "impit-firefox144",
      "impit-ios18",
    ]);
    expect(() => campaignClasses(["person-chromium-xdotool"])).toThrow(/no bot class/);
    expect(() => campaignClasses(["nothing-like-this"])).toThrow(/no bot class/);
  });
});

describe("campaign tally and table", () => {
  it("6 of 30 accounts meets the per-campaign goal (20%); two such campaigns miss the 10% across", () => {
    const a = result("a", Array(30).fill("challenged"), 6);
    const b = result("b", Array(30).fill("challenged"), 6);
    const t = campaignTotals([a, b]);
    expect(t.campaign).toMatchObject({ n: 60, created: 12, challenged: 60 });
    expect(t.perCampaignMet).toBe(true);
    expect(t.acrossMet).toBe(false);
    expect(t.before).toMatchObject({ n: 2, created: 2 });
  });

  it("7 of 30 misses the per-campaign goal; a skipped campaign counts in neither total", () => {
    const a = result("a", Array(30).fill("allowed"), 7);
    const skipped = { ...result("s", [], 0), skipped: "missing Xvfb" };
    const t = campaignTotals([a, skipped]);
    expect(t.campaigns).toBe(1);
    expect(t.perCampaignMet).toBe(false);
    expect(t.campaign.n).toBe(30);
    expect(campaignTotals([skipped]).perCampaignMet).toBe(false);
  });

  it("the table has a line per campaign, the totals and both goals; --no-ja4 is in its header", () => {
    const a = result("impit-chrome151", ["allowed", "challenged", "denied"], 1);
    a.ja4 = false;
    a.reported = { after: 12, eventIds: ["e1"], statuses: [200] };
    const text = formatCampaignTable([a, { ...result("gone", [], 0), skipped: "missing Xvfb" }]);
    expect(text).toContain("JA4: not passed (a plain reverse proxy)");
    expect(text).toMatch(
      /\| impit-chrome151 +\| 3 +\| 1 \(33%\) +\| 1 \(33%\) +\| 1 \(33%\) +\| 1 \(33%\) +\| 1: 1\/0\/0/,
    );
    expect(text).toContain("1 reported abuse_confirmed after signup #12");
    expect(text).toContain("NOT RUN: missing Xvfb");
    expect(text).toMatch(/\*\*all campaigns\*\* +\| 3 +\| 1 \(33%\)/);
    expect(text).toContain("at most 20% of a campaign's signups create an account: NOT met (worst 33%)");
    expect(text).toContain("at most 10% across all campaigns: NOT met (33%)");
  });

  it("the operator's action and what the campaign created after it are in the notes", () => {
    const a = result("patchright-careful", ["allowed", "allowed", "allowed", "denied"], 3);
    a.reported = { after: 3, eventIds: ["e1", "e2", "e3"], statuses: [200, 200, 200] };
    a.action = { applied: true, list: "environments", kind: "environment" };
    a.afterAction = noCounts();
    count(a.afterAction, { first: "denied", created: false, humanFirst: false });
    expect(formatCampaignTable([a])).toContain(
      "operator denied its environment (environments): then 0 (0%) of 1 created",
    );
    const b = result("impit-chrome151", ["allowed"], 1);
    b.action = { applied: false, why: "no mark shared by every reported attempt that a deny list takes" };
    expect(formatCampaignTable([b])).toContain("operator took no action: no mark shared");
  });
});
