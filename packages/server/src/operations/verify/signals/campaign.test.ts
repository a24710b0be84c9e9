import { describe, expect, it } from "vitest";
import type { CounterReading } from "../../../store/interfaces.js";
import { DEFAULT_MODEL } from "../decisionModel.js";
import {
  type CampaignKey,
  campaignFindings,
  campaignHits,
  campaignKeys,
  campaignReadings,
  LONG_WINDOW_MS,
  SHORT_WINDOW_MS,
} from "./campaign.js";
import { readUserAgent } from "./userAgent.js";

const rules = DEFAULT_MODEL.campaign;
const weights = DEFAULT_MODEL.weights.campaign;
const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/** Readings as the counters give them: whole windows, nothing in the previous bucket. */
const reading = (current: number): CounterReading => ({ current, previous: 0, elapsed: 0.5 });

/** The finding of one key with these counts: the tenant's totals (short, day) and the key's. */
function finding(totals: [number, number], key: [number, number], kind: CampaignKey["kind"] = "environment") {
  const keys: CampaignKey[] = [{ kind, value: "k" }];
  const readings = [reading(totals[0]), reading(totals[1]), reading(key[0]), reading(key[1])];
  return campaignFindings("signup", campaignReadings(keys, readings, rules), rules, weights)[0];
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
    expect(campaignHits("t", "signup", [])).toEqual([]);
  });

  it("hit the tenant's totals and each key over ten minutes and a day, named by hashes", () => {
    const hits = campaignHits("t", "signup", [
      { kind: "shape", value: "s" },
      { kind: "environment", value: "e" },
    ]);
    expect(hits.map((h) => h.windowMs)).toEqual([
      SHORT_WINDOW_MS,
      LONG_WINDOW_MS,
      SHORT_WINDOW_MS,
      LONG_WINDOW_MS,
      SHORT_WINDOW_MS,
      LONG_WINDOW_MS,
    ]);
    for (const h of hits) expect(h.name).toMatch(/^c:[0-9a-f]{64}$/);
    expect(new Set(hits.map((h) => h.name)).size).toBe(3);
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

  it("judges shapes only once the tenant has a day's baseline (a new site's people may share one)", () => {
    expect(finding([40, 40], [40, 40], "shape")).toBeUndefined();
    expect(finding([40, 400], [40, 400], "shape")).toBeUndefined();
    // With a baseline, a shape new to it surges like an environment.
    expect(finding([100, 10_000], [rules.floor, rules.floor], "shape")?.id).toBe("campaign_surge");
    // And one that holds the whole site's traffic does not.
    expect(finding([100, 10_000], [100, 10_000], "shape")).toBeUndefined();
  });
});
