import { describe, expect, it } from "vitest";
import type { CounterReading } from "../../../store/interfaces.js";
import { DEFAULT_MODEL } from "../decisionModel.js";
import {
  type CampaignKey,
  campaignFindings,
  campaignHits,
  campaignKeys,
  campaignReadings,
  chanceThreshold,
  LONG_WINDOW_MS,
  SHORT_WINDOW_MS,
  surgeThreshold,
} from "./campaign.js";
import { readUserAgent } from "./userAgent.js";

const rules = DEFAULT_MODEL.campaign;
const weights = DEFAULT_MODEL.weights.campaign;
const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/** Readings as the counters give them: whole windows, nothing in the previous bucket. */
const reading = (current: number): CounterReading => ({ current, previous: 0, elapsed: 0.5 });

/**
 * The finding of one key with these counts: the tenant's totals (short, day) and the key's, and for
 * an environment the key's ten minutes from the attempt's network (default: all of them, one network).
 */
function finding(
  totals: [number, number],
  key: [number, number],
  kind: CampaignKey["kind"] = "environment",
  fromNetwork = key[0],
) {
  const keys: CampaignKey[] = [{ kind, value: "k" }];
  const readings = [reading(totals[0]), reading(totals[1]), reading(key[0]), reading(key[1])];
  if (kind === "environment") readings.push(reading(fromNetwork));
  return campaignFindings(
    "signup",
    campaignReadings(keys, "81.2.3.0/24", readings, rules),
    rules,
    weights,
  )[0];
}

describe("campaign keys", () => {
  it("are the shape (TLS, header order, family, platform, language) and the page's environment", () => {
    const headers = {
      "user-agent": CHROME,
      accept: "*/*",
      "accept-language": "en-US,en;q=0.9",
      cookie: "a=1",
    };
    const keys = campaignKeys(readUserAgent(CHROME), headers, undefined, "digest");
    expect(keys.map((k) => k.kind)).toEqual(["shape", "environment"]);
    expect(keys[0]?.value).toBe("|user-agent,accept,accept-language|chromium|Windows|en-us");
    // Cookies, forwarded headers and the body's headers differ between one client's requests.
    const other = campaignKeys(
      readUserAgent(CHROME),
      { ...headers, cookie: "b=2", "x-forwarded-for": "1.2.3.4" },
      undefined,
      undefined,
    );
    expect(other[0]?.value).toBe(keys[0]?.value);
  });

  it("count nothing for a request with neither headers nor a fingerprint nor an environment", () => {
    expect(campaignKeys(readUserAgent(undefined), undefined, undefined, undefined)).toEqual([]);
    expect(campaignHits("t", "signup", [], "81.2.3.0/24")).toEqual([]);
  });

  it("hit the tenant's totals and each key over ten minutes and a day, named by hashes", () => {
    const keys: CampaignKey[] = [
      { kind: "shape", value: "s" },
      { kind: "environment", value: "e" },
    ];
    const hits = campaignHits("t", "signup", keys, "81.2.3.0/24");
    // The environment is also counted from the attempt's network over ten minutes.
    expect(hits.map((h) => h.windowMs)).toEqual([
      SHORT_WINDOW_MS,
      LONG_WINDOW_MS,
      SHORT_WINDOW_MS,
      LONG_WINDOW_MS,
      SHORT_WINDOW_MS,
      LONG_WINDOW_MS,
      SHORT_WINDOW_MS,
    ]);
    for (const h of hits) expect(h.name).toMatch(/^c:[0-9a-f]{64}$/);
    expect(new Set(hits.map((h) => h.name)).size).toBe(4);
    const elsewhere = campaignHits("t", "signup", keys, "81.2.4.0/24");
    expect(elsewhere.slice(0, 6)).toEqual(hits.slice(0, 6));
    expect(elsewhere[6]?.name).not.toBe(hits[6]?.name);
    // Without a network there is nothing to count it from.
    expect(campaignHits("t", "signup", keys, undefined)).toHaveLength(6);
  });
});

describe("the campaign rule", () => {
  it("flags a key new to the day's baseline once it reaches the floor in ten minutes", () => {
    // A mature tenant: 10,000 attempts in the day, 100 in the last ten minutes.
    expect(finding([100, 10_000], [rules.floor - 1, rules.floor - 1])).toBeUndefined();
    const f = finding([100, 10_000], [rules.floor, rules.floor]);
    expect(f?.id).toBe("campaign_surge");
    expect(f?.logOdds).toBeCloseTo(weights.surge);
    // Doubling past the threshold adds, up to the cap.
    expect(finding([130, 10_030], [30, 30])?.logOdds).toBe(weights.cap);
  });

  it("never flags a key that holds a large share of the day's people, at its usual share", () => {
    // One phone model: 30% of the day's 10,000 attempts, 30 of the last ten minutes' 100.
    expect(finding([100, 10_000], [30, 3_000])).toBeUndefined();
    // A busy hour for everyone (three times the traffic, same shares) is no campaign either.
    expect(finding([300, 10_200], [90, 3_060])).toBeUndefined();
  });

  it("flags that same popular key when it jumps far above its share", () => {
    // 30% of the day, then 150 of the last ten minutes' 220 (others: 70, expected 30).
    expect(finding([220, 10_120], [150, 3_050])?.id).toBe("campaign_surge");
  });

  it("on a tenant without a baseline, holds an environment to a small share of the others' traffic", () => {
    // A new tenant: 20 people and 30 attempts of one environment in ten minutes.
    expect(finding([50, 50], [30, 30])?.id).toBe("campaign_surge");
    // 100 people, 20 of them on one phone model and setting: no campaign.
    expect(finding([120, 120], [20, 20])).toBeUndefined();
  });

  it("does not flag a popular key whose busy ten minutes reach the floor by chance", () => {
    // A few percent of 3,000 attempts a day (one iPhone's environment): expected about 1.5 in ten
    // minutes beside the others' 40, so 4 × expected is 6, the floor; chance reaches 7 or 8 in ten
    // minutes several times a day.
    const day = 3_000;
    const popular = Math.round(day * 0.035);
    expect(finding([48, day], [8, popular], "environment", 1)).toBeUndefined();
    // The count chance does not reach: a surge.
    expect(finding([55, day], [15, popular], "environment", 1)?.id).toBe("campaign_surge");
  });

  it("judges shapes only once the tenant has a day's baseline (a new site's people may share one)", () => {
    expect(finding([40, 40], [40, 40], "shape")).toBeUndefined();
    expect(finding([40, 400], [40, 400], "shape")).toBeUndefined();
    // With a baseline, a shape new to it surges like an environment.
    expect(finding([100, 10_000], [rules.floor, rules.floor], "shape")?.id).toBe("campaign_surge");
    // And one that holds the whole site's traffic does not.
    expect(finding([100, 10_000], [100, 10_000], "shape")).toBeUndefined();
  });
});

describe("one machine's browsers", () => {
  it("are an environment new to the day's baseline, spread over networks: automation, past the surge's cap", () => {
    // Six attempts in ten minutes, none the day before, one from this attempt's network.
    const f = finding([100, 10_000], [rules.floor, rules.floor], "environment", 1);
    expect(f?.id).toBe("campaign_surge");
    expect(f?.automation).toBe(true);
    expect(f?.logOdds).toBe(weights.machine);
    expect(weights.machine).toBeGreaterThan(weights.cap);
    expect(f?.reason).toMatch(/one machine's browsers/);
    // Below the floor, nothing.
    expect(finding([100, 10_000], [rules.floor - 1, rules.floor - 1], "environment", 1)).toBeUndefined();
  });

  it("are not an office or a class signing up together from one network", () => {
    const f = finding([100, 10_000], [rules.floor, rules.floor], "environment", rules.floor);
    expect(f?.id).toBe("campaign_surge");
    expect(f?.automation).toBeUndefined();
    expect(f?.logOdds).toBeCloseTo(weights.surge);
    // Most of them from this one: still the office.
    expect(finding([100, 10_000], [rules.floor, rules.floor], "environment", 4)?.automation).toBeUndefined();
  });

  it("are a campaign that rotates as few as two networks", () => {
    expect(finding([100, 10_000], [rules.floor, rules.floor], "environment", 3)?.automation).toBe(true);
  });

  it("are not a device people used the day before, even when it surges", () => {
    // 30% of the day, then 150 of the last ten minutes' 220, each from a network of its own.
    const f = finding([220, 10_120], [150, 3_050], "environment", 1);
    expect(f?.id).toBe("campaign_surge");
    expect(f?.automation).toBeUndefined();
    // A key the day before held a quarter of the window's count or more is not new to it.
    expect(finding([100, 10_000], [8, 10], "environment", 1)?.automation).toBeUndefined();
    expect(finding([100, 10_000], [12, 14], "environment", 1)?.automation).toBe(true);
  });

  it("are never a request shape: many people share one browser's handshake and header order", () => {
    expect(finding([100, 10_000], [rules.floor, rules.floor], "shape")?.automation).toBeUndefined();
  });
});

describe("the count chance reaches", () => {
  /** P(X ≥ k) for X Poisson about `mean`, summed directly (small means only). */
  function tail(mean: number, k: number): number {
    let term = Math.exp(-mean);
    let below = 0;
    for (let i = 0; i < k; i++) {
      below += term;
      term *= mean / (i + 1);
    }
    return 1 - below;
  }

  it("is the smallest count whose Poisson tail is within the chance", () => {
    for (const mean of [0.1, 0.5, 1, 1.5, 2, 3, 5, 8, 12]) {
      const k = chanceThreshold(mean, 1e-4);
      expect(tail(mean, k)).toBeLessThanOrEqual(1e-4);
      expect(tail(mean, k - 1)).toBeGreaterThan(1e-4);
    }
    // Worked by hand: expected 1.5, P(X ≥ 8) ≈ 1.7e-4, P(X ≥ 9) ≈ 3.0e-5.
    expect(chanceThreshold(1.5, 1e-4)).toBe(9);
    expect(chanceThreshold(0, 1e-4)).toBe(1);
  });

  it("does not underflow for a large expectation", () => {
    const k = chanceThreshold(2_000, 1e-4);
    expect(k).toBeGreaterThan(2_000 + 3 * Math.sqrt(2_000));
    expect(k).toBeLessThan(2_000 + 5 * Math.sqrt(2_000));
  });

  it("decides the threshold only where it passes the floor and the ratio, for a key the day had", () => {
    // Nothing expected: the floor.
    expect(surgeThreshold({ expected: 0.05, before: 3 }, rules)).toBe(rules.floor);
    // About 1.5 expected of a key seen before: chance's 9, over the floor and 4 × 1.5.
    expect(surgeThreshold({ expected: 1.5, before: 100 }, rules)).toBe(9);
    // The same expectation from the prior alone (a key new to the day): the floor and the ratio.
    expect(surgeThreshold({ expected: 1.5, before: 0 }, rules)).toBe(rules.floor);
    // Much expected: the ratio, far beyond chance.
    expect(surgeThreshold({ expected: 100, before: 5_000 }, rules)).toBe(rules.ratio * 100);
  });
});
