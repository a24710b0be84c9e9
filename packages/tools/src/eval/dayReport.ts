import { DEVICE_CLASSES, type DeviceClass } from "./devicePopulation.js";
import { CAMPAIGNS, type CampaignSpec, type DayRow, WINDOW_MS } from "./populationDay.js";
import type { Goal } from "./runEval.js";

/**
 * What the day of traffic (populationDay.ts) shows: false positives on people by device class without
 * and with the campaigns, the environments people share, each campaign's verdicts, and the people who
 * share a campaign's device class or environment. Every count is over the rows verify answered.
 */

/** An environment held by at least this share of the day's people is popular (one phone model, say). */
export const POPULAR_SHARE = 0.01;

const people = (rows: readonly DayRow[]) => rows.filter((r) => r.who === "person");
const surged = (r: DayRow) => r.findings.includes("campaign_surge");
const pct = (n: number, of: number) => (of === 0 ? "-" : `${((100 * n) / of).toFixed(1)}%`);
const cell = (n: number, of: number) => `${n} (${pct(n, of)})`;

/** The most attempts of `times` (milliseconds, sorted) within any 10 minutes. */
export function peakWindow(times: readonly number[]): number {
  let peak = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[hi] as number) - (times[lo] as number) >= WINDOW_MS) lo++;
    peak = Math.max(peak, hi - lo + 1);
  }
  return peak;
}

export interface EnvironmentShare {
  digest: string;
  /** The device class most of its people are on. */
  cls: DeviceClass;
  people: number;
  share: number;
  /** Its people's most signups within 10 minutes. */
  peak: number;
}

/** The environments of the day's people, most shared first. */
export function environmentShares(rows: readonly DayRow[]): EnvironmentShare[] {
  const mine = people(rows);
  const byDigest = new Map<string, DayRow[]>();
  for (const r of mine) byDigest.set(r.digest, [...(byDigest.get(r.digest) ?? []), r]);
  return [...byDigest.entries()]
    .map(([digest, rs]) => {
      const classes = new Map<DeviceClass, number>();
      for (const r of rs) classes.set(r.cls, (classes.get(r.cls) ?? 0) + 1);
      const cls = [...classes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] as DeviceClass;
      const times = rs.map((r) => r.at).sort((a, b) => a - b);
      return { digest, cls, people: rs.length, share: rs.length / mine.length, peak: peakWindow(times) };
    })
    .sort((a, b) => b.people - a.people || (a.digest < b.digest ? -1 : 1));
}

/** The digests held by at least POPULAR_SHARE of the day's people. */
export function popularDigests(rows: readonly DayRow[]): Set<string> {
  return new Set(
    environmentShares(rows)
      .filter((e) => e.share >= POPULAR_SHARE)
      .map((e) => e.digest),
  );
}

/** The environments the campaigns report (one each). */
export function campaignDigests(rows: readonly DayRow[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of rows) if (r.who !== "person") out.set(r.who, r.digest);
  return out;
}

/** The population: people and environments by class, and the most shared environments. */
export function populationTable(rows: readonly DayRow[]): string {
  const mine = people(rows);
  const shares = environmentShares(rows);
  const popular = popularDigests(rows);
  const lines = [
    `${"device class".padEnd(16)}${"people".padStart(8)}${"share".padStart(8)}${"environments".padStart(14)}${"on a popular one".padStart(18)}`,
  ];
  for (const cls of DEVICE_CLASSES) {
    const rs = mine.filter((r) => r.cls === cls);
    const digests = new Set(rs.map((r) => r.digest));
    const onPopular = rs.filter((r) => popular.has(r.digest)).length;
    lines.push(
      `${cls.padEnd(16)}${String(rs.length).padStart(8)}${pct(rs.length, mine.length).padStart(8)}${String(digests.size).padStart(14)}${cell(onPopular, rs.length).padStart(18)}`,
    );
  }
  lines.push("");
  lines.push(
    `${shares.length} environments among ${mine.length} people; the most shared (popular: ≥ ${POPULAR_SHARE * 100}% of the day's people):`,
  );
  for (const e of shares.slice(0, 6)) {
    lines.push(
      `  ${e.digest.slice(0, 12)}  ${e.cls.padEnd(15)} ${String(e.people).padStart(5)} people (${pct(e.people, mine.length)}), at most ${e.peak} in 10 minutes`,
    );
  }
  return lines.join("\n");
}

/** People challenged and denied, and those challenged with campaign_surge, by device class, in both runs. */
export function falsePositivesTable(quiet: readonly DayRow[], withCampaigns: readonly DayRow[]): string {
  const header = `${"device class".padEnd(16)}${"people".padStart(7)} | ${"challenged".padStart(12)}${"denied".padStart(8)}${"surge".padStart(7)} | ${"challenged".padStart(12)}${"denied".padStart(8)}${"surge".padStart(7)}`;
  const lines = [
    `${"".padEnd(23)} | ${"without campaigns".padEnd(27)} | with campaigns`,
    header,
    "-".repeat(header.length),
  ];
  const row = (label: string, test: (r: DayRow) => boolean) => {
    const a = people(quiet).filter(test);
    const b = people(withCampaigns).filter(test);
    const counts = (rs: DayRow[]) =>
      `${cell(rs.filter((r) => r.decision === "challenge").length, rs.length).padStart(12)}${String(rs.filter((r) => r.decision === "deny").length).padStart(8)}${String(rs.filter(surged).length).padStart(7)}`;
    lines.push(`${label.padEnd(16)}${String(a.length).padStart(7)} | ${counts(a)} | ${counts(b)}`);
  };
  for (const cls of DEVICE_CLASSES) row(cls, (r) => r.cls === cls);
  row("all people", () => true);
  return lines.join("\n");
}

export interface CampaignOutcome {
  spec: CampaignSpec;
  signups: number;
  allow: number;
  challenge: number;
  deny: number;
  /** Its signups with campaign_surge. */
  surged: number;
  /** Each signup's count of the campaign's own signups in the 10 minutes up to it, and whether it surged. */
  windows: { count: number; surged: boolean; decision: DayRow["decision"] }[];
}

/** Each campaign's verdicts, with its own 10-minute counts (the eval's exact ones). */
export function campaignOutcomes(rows: readonly DayRow[]): CampaignOutcome[] {
  return CAMPAIGNS.map((campaign) => {
    const mine = rows.filter((r) => r.who === campaign.id).sort((a, b) => a.at - b.at);
    const windows = mine.map((r) => ({
      count: mine.filter((o) => o.at <= r.at && o.at > r.at - WINDOW_MS).length,
      surged: surged(r),
      decision: r.decision,
    }));
    return {
      spec: campaign,
      signups: mine.length,
      allow: mine.filter((r) => r.decision === "allow").length,
      challenge: mine.filter((r) => r.decision === "challenge").length,
      deny: mine.filter((r) => r.decision === "deny").length,
      surged: mine.filter(surged).length,
      windows,
    };
  });
}

/** The campaigns' verdicts; the people on their device class while each ran, and on their environment. */
export function campaignTable(quiet: readonly DayRow[], withCampaigns: readonly DayRow[]): string {
  const lines: string[] = [];
  const digests = campaignDigests(withCampaigns);
  for (const o of campaignOutcomes(withCampaigns)) {
    const first = o.windows.findIndex((w) => w.surged);
    const peak = Math.max(0, ...o.windows.map((w) => w.count));
    lines.push(`${o.spec.id}: ${o.spec.what}`);
    lines.push(
      `  ${o.signups} signups: allowed ${o.allow}, challenged ${o.challenge}, denied ${o.deny}; campaign_surge on ${o.surged}${first < 0 ? "" : `, from its signup #${first + 1} (with ${o.windows[first]?.count} of its signups in 10 minutes)`}; at most ${peak} of its signups in 10 minutes`,
    );
    lines.push(`  by its count in 10 minutes: ${windowsSummary(o.windows)}`);
    const mine = withCampaigns.filter((r) => r.who === o.spec.id);
    const from = Math.min(...mine.map((r) => r.at));
    const to = Math.max(...mine.map((r) => r.at)) + WINDOW_MS;
    const during = (r: DayRow) => r.cls === o.spec.cls && r.at >= from && r.at <= to;
    const digest = digests.get(o.spec.id) ?? "";
    lines.push(
      `  people on ${o.spec.cls} while it ran: ${sharedLine(quiet, withCampaigns, during)}`,
      `  people on its environment (${digest.slice(0, 12)}) all day: ${sharedLine(quiet, withCampaigns, (r) => r.digest === digest)}`,
    );
  }
  return lines.join("\n");
}

/** "count n: decisions" per 10-minute count the campaign's signups were at. */
function windowsSummary(windows: CampaignOutcome["windows"]): string {
  const byCount = new Map<number, CampaignOutcome["windows"]>();
  for (const w of windows) byCount.set(w.count, [...(byCount.get(w.count) ?? []), w]);
  return [...byCount.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([count, ws]) => {
      const s = ws.filter((w) => w.surged).length;
      const d = (k: DayRow["decision"]) => ws.filter((w) => w.decision === k).length;
      return `${count}: ${ws.length} (surge ${s}; ${d("allow")}/${d("challenge")}/${d("deny")})`;
    })
    .join(", ");
}

function sharedLine(
  quiet: readonly DayRow[],
  withCampaigns: readonly DayRow[],
  test: (r: DayRow) => boolean,
) {
  const a = people(quiet).filter(test);
  const b = people(withCampaigns).filter(test);
  const say = (rs: DayRow[]) =>
    `challenged ${rs.filter((r) => r.decision === "challenge").length}, denied ${rs.filter((r) => r.decision === "deny").length}, campaign_surge ${rs.filter(surged).length}`;
  return `${a.length}; without campaigns ${say(a)}; with them ${say(b)}`;
}

/** For each class, the findings verify recorded on its people (but browser_consistent), with counts. */
export function peopleFindingsTable(rows: readonly DayRow[]): string {
  const lines: string[] = [];
  for (const cls of DEVICE_CLASSES) {
    const counts = new Map<string, number>();
    for (const r of people(rows)) {
      if (r.cls !== cls) continue;
      for (const id of new Set(r.findings))
        if (id !== "browser_consistent") counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    if (counts.size === 0) continue;
    const cells = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    lines.push(`${cls.padEnd(16)}${cells.map(([id, n]) => `${id} ${n}`).join(", ")}`);
  }
  return lines.length === 0 ? "(none)" : lines.join("\n");
}

/**
 * The issue's goals for people (issue 47): none denied; at most 2% challenged without a campaign and
 * 5% of those on a campaign's device class while it runs; and the promise of the rule: people alone
 * never surge, and no one on a popular environment does beside a campaign (its own environment left
 * out).
 */
export function dayGoals(quiet: readonly DayRow[], withCampaigns: readonly DayRow[]): Goal[] {
  const share = (rs: readonly DayRow[], test: (r: DayRow) => boolean) =>
    rs.length === 0 ? 0 : rs.filter(test).length / rs.length;
  const denied = Math.max(
    share(people(quiet), (r) => r.decision === "deny"),
    share(people(withCampaigns), (r) => r.decision === "deny"),
  );
  const challenged = share(people(quiet), (r) => r.decision === "challenge");
  let matching = 0;
  for (const spec of CAMPAIGNS) {
    const mine = withCampaigns.filter((r) => r.who === spec.id);
    if (mine.length === 0) continue;
    const from = Math.min(...mine.map((r) => r.at));
    const to = Math.max(...mine.map((r) => r.at)) + WINDOW_MS;
    const during = people(withCampaigns).filter((r) => r.cls === spec.cls && r.at >= from && r.at <= to);
    matching = Math.max(
      matching,
      share(during, (r) => r.decision === "challenge"),
    );
  }
  const aloneSurged = share(people(quiet), surged);
  const popular = popularDigests(quiet);
  const campaigns = new Set(campaignDigests(withCampaigns).values());
  const onPopular = (r: DayRow) => popular.has(r.digest) && !campaigns.has(r.digest);
  const popularSurged = Math.max(
    share(people(quiet).filter(onPopular), surged),
    share(people(withCampaigns).filter(onPopular), surged),
  );
  return [
    { name: "people denied (day)", value: denied, target: "= 0", met: denied === 0 },
    {
      name: "people challenged, no campaign (day)",
      value: challenged,
      target: "≤ 2%",
      met: challenged <= 0.02,
    },
    {
      name: "people on a campaign's device class challenged while it runs",
      value: matching,
      target: "≤ 5%",
      met: matching <= 0.05,
    },
    {
      name: "people with campaign_surge, no campaign (day)",
      value: aloneSurged,
      target: "= 0",
      met: aloneSurged === 0,
    },
    {
      name: "people on popular environments with campaign_surge",
      value: popularSurged,
      target: "= 0",
      met: popularSurged === 0,
    },
  ];
}
