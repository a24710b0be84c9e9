// Campaign mode, the arithmetic: the order of one campaign's signups (people before, the tool's
// signups paced over a few minutes, people after), the tally of what the app did with them, and the
// table. No browser, server or clock here: lib/campaignRun.mjs runs a plan, and campaign.test.ts
// checks these.

/** The goals the campaign table is read against (issue 47): accounts a campaign gets, at most. */
export const GOALS = Object.freeze({ perCampaign: 0.2, acrossCampaigns: 0.1 });

/**
 * @typedef {{ phase: "before" | "campaign" | "after", client: string, at?: number }} Step
 *   at: for a campaign signup, when it starts, in ms after the campaign's first one (it starts then
 *   or as soon as the one before it has ended)
 */

/**
 * One campaign's steps. People take turns from `peopleClasses` (the real person first, so that every
 * campaign has one); the rotation goes on after the campaign where it stopped before it.
 * @param {{ campaign: string, size: number, people: number, peopleClasses: string[], spreadMs: number }} o
 *   people: signups by people before the campaign, and as many after it
 * @returns {Step[]}
 */
export function campaignPlan({ campaign, size, people, peopleClasses, spreadMs }) {
  if (!Number.isInteger(size) || size < 1) throw new Error("a campaign has at least one signup");
  if (!Number.isInteger(people) || people < 0) throw new Error("people must be a whole number");
  if (people > 0 && peopleClasses.length === 0) throw new Error("people signups need a people class");
  let turn = 0;
  const person = () => /** @type {string} */ (peopleClasses[turn++ % peopleClasses.length]);
  /** @type {Step[]} */
  const steps = [];
  for (let i = 0; i < people; i++) steps.push({ phase: "before", client: person() });
  for (let i = 0; i < size; i++) {
    steps.push({ phase: "campaign", client: campaign, at: Math.round((i * spreadMs) / size) });
  }
  for (let i = 0; i < people; i++) steps.push({ phase: "after", client: person() });
  return steps;
}

/**
 * @typedef {{ n: number, created: number, allowed: number, challenged: number, denied: number, other: number, humanFirst: number }} Counts
 * @typedef {{
 *   id: string, label: string, ja4: boolean, skipped?: string,
 *   campaign: Counts, before: Counts, after: Counts,
 *   ms: number, seconds: number, reported?: { after: number, eventIds: string[], statuses: number[] },
 *   action?: { applied: boolean, why?: string, list?: string, kind?: string },
 *   afterAction?: Counts,
 *   errors: string[], ja4Seen: Set<string>, reasons: Map<string, number>,
 * }} CampaignResult
 *   ms: the campaign's signups, first start to last end; seconds: the whole campaign with its people;
 *   action: the operator's one action after the report; afterAction: the campaign's signups after it
 */

/** @returns {Counts} */
export const noCounts = () => ({
  n: 0,
  created: 0,
  allowed: 0,
  challenged: 0,
  denied: 0,
  other: 0,
  humanFirst: 0,
});

/**
 * Adds one signup's outcome to counts.
 * @param {Counts} counts
 * @param {{ first: "allowed" | "challenged" | "denied" | "other", created: boolean, humanFirst: boolean }} o
 */
export function count(counts, o) {
  counts.n += 1;
  counts[o.first] += 1;
  if (o.created) counts.created += 1;
  if (o.humanFirst) counts.humanFirst += 1;
}

/** @param {number} k @param {number} n */
const share = (k, n) => (n === 0 ? 0 : k / n);
const pct = (k, n) => (n === 0 ? "-" : `${k} (${Math.round(100 * share(k, n))}%)`);

/**
 * The totals across campaigns that ran, and whether each goal is met.
 * @param {CampaignResult[]} results
 */
export function campaignTotals(results) {
  const ran = results.filter((r) => !r.skipped);
  const campaign = noCounts();
  const before = noCounts();
  const after = noCounts();
  for (const r of ran) {
    for (const [into, from] of [
      [campaign, r.campaign],
      [before, r.before],
      [after, r.after],
    ]) {
      for (const k of /** @type {(keyof Counts)[]} */ (Object.keys(into))) into[k] += from[k];
    }
  }
  const worst = Math.max(0, ...ran.map((r) => share(r.campaign.created, r.campaign.n)));
  return {
    campaigns: ran.length,
    campaign,
    before,
    after,
    share: share(campaign.created, campaign.n),
    worst,
    perCampaignMet: ran.length > 0 && worst <= GOALS.perCampaign,
    acrossMet: ran.length > 0 && share(campaign.created, campaign.n) <= GOALS.acrossCampaigns,
  };
}

const people = (c) => (c.n === 0 ? "-" : `${c.n}: ${c.created}/${c.challenged}/${c.denied}`);

/**
 * The table: one line per campaign, then the totals and the goals.
 * @param {CampaignResult[]} results
 * @param {{ reasons?: boolean }} [opts]
 */
export function formatCampaignTable(results, { reasons = false } = {}) {
  const head = [
    "campaign",
    "signups",
    "account created",
    "allowed at once",
    "challenged",
    "denied",
    "people before n: created/challenged/denied",
    "people after",
    "notes",
  ];
  const line = (r) => {
    if (r.skipped) return [r.id, "0", "-", "-", "-", "-", "-", "-", `NOT RUN: ${r.skipped}`];
    const c = r.campaign;
    const notes = [];
    if (c.other) notes.push(`${c.other} other first answer`);
    if (c.humanFirst) notes.push(`${c.humanFirst} scored human`);
    if (r.errors.length) notes.push(`${r.errors.length} client errors`);
    if (r.reported) {
      notes.push(`${r.reported.eventIds.length} reported abuse_confirmed after signup #${r.reported.after}`);
    }
    if (r.action) {
      notes.push(
        r.action.applied
          ? `operator denied its ${r.action.kind} (${r.action.list}): then ${pct(r.afterAction?.created ?? 0, r.afterAction?.n ?? 0)} of ${r.afterAction?.n ?? 0} created`
          : `operator took no action: ${r.action.why}`,
      );
    }
    notes.push(`${(r.ms / 60_000).toFixed(1)} min for its signups`);
    return [
      r.id,
      String(c.n),
      pct(c.created, c.n),
      pct(c.allowed, c.n),
      pct(c.challenged, c.n),
      pct(c.denied, c.n),
      people(r.before),
      people(r.after),
      notes.join("; "),
    ];
  };
  const t = campaignTotals(results);
  const body = results.map(line);
  body.push([
    "**all campaigns**",
    String(t.campaign.n),
    pct(t.campaign.created, t.campaign.n),
    pct(t.campaign.allowed, t.campaign.n),
    pct(t.campaign.challenged, t.campaign.n),
    pct(t.campaign.denied, t.campaign.n),
    people(t.before),
    people(t.after),
    t.campaign.humanFirst ? `${t.campaign.humanFirst} scored human` : "",
  ]);
  const widths = head.map((_, i) => Math.max(head[i].length, ...body.map((b) => b[i].length)));
  const fmt = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  const ja4 = results.some((r) => !r.skipped && !r.ja4)
    ? "not passed (a plain reverse proxy)"
    : "passed by the door";
  const out = [
    `JA4: ${ja4}`,
    "",
    fmt(head),
    `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`,
    ...body.map(fmt),
    "",
    `Goal: at most ${GOALS.perCampaign * 100}% of a campaign's signups create an account: ${
      t.campaigns === 0
        ? "nothing ran"
        : `${t.perCampaignMet ? "met" : "NOT met"} (worst ${Math.round(100 * t.worst)}%)`
    }`,
    `Goal: at most ${GOALS.acrossCampaigns * 100}% across all campaigns: ${
      t.campaigns === 0 ? "nothing ran" : `${t.acrossMet ? "met" : "NOT met"} (${Math.round(100 * t.share)}%)`
    }`,
  ];
  const seen = results.filter((r) => !r.skipped && r.ja4Seen.size > 0);
  if (seen.length > 0) {
    out.push("", "JA4 each campaign's connections presented:");
    for (const r of seen) out.push(`${r.id}: ${[...r.ja4Seen].sort().join(", ")}`);
  }
  if (reasons) {
    out.push("");
    for (const r of results) {
      if (r.skipped || r.reasons.size === 0) continue;
      out.push(`${r.id}:`);
      const top = [...r.reasons.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
      for (const [text, n] of top) out.push(`  ${n}× ${text}`);
    }
  }
  return out.join("\n");
}
