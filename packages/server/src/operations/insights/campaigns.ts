import type { Decision } from "../../domain.js";
import type { AbusiveSetup, MarkCount, MarkValue } from "../../store/interfaces.js";
import { listOfMark, type RuleList } from "../policy/denyRule.js";

/** A mark's value shared by attempts labelled abusive: a campaign's trace, for a human to judge. */
export interface Campaign extends MarkValue {
  /** Attempts in the period bearing it with an effective abuse outcome. */
  labelled: number;
  /** Attempts in the period bearing it without one. */
  unlabelled: number;
  /** Of the unlabelled, those with an effective good outcome (converted, false_positive): the collateral. */
  good: number;
  /** The engine's decisions on every attempt bearing it. */
  decisions: Record<Decision, number>;
  firstSeen: number;
  lastSeen: number;
  /** The deny list that would turn it away, or null (a shape has none). */
  list: RuleList | null;
  /** Whether that list names it already. */
  listed: boolean;
}

/** The fewest labelled attempts that make a campaign. */
export const CAMPAIGN_MIN_LABELLED = 2;

/**
 * The marks shared by at least CAMPAIGN_MIN_LABELLED of the abusive attempts, most shared first, at
 * most `limit`: the values whose sharers are worth counting.
 */
export function sharedMarks(setups: readonly AbusiveSetup[], limit: number): MarkValue[] {
  const seen = new Map<string, { mark: MarkValue; n: number }>();
  for (const setup of setups) {
    for (const mark of setup.marks) {
      const at = `${mark.kind}\n${mark.value}`;
      const entry = seen.get(at) ?? { mark, n: 0 };
      entry.n += 1;
      seen.set(at, entry);
    }
  }
  return [...seen.values()]
    .filter((e) => e.n >= CAMPAIGN_MIN_LABELLED)
    .sort(
      (a, b) =>
        b.n - a.n || a.mark.kind.localeCompare(b.mark.kind) || a.mark.value.localeCompare(b.mark.value),
    )
    .slice(0, limit)
    .map((e) => e.mark);
}

/** The store's counts as one campaign per mark value, most labelled first. */
export function campaignsOf(
  counts: readonly MarkCount[],
  listed: (list: RuleList, value: string) => boolean,
): Campaign[] {
  const out = new Map<string, Campaign>();
  for (const c of counts) {
    const at = `${c.kind}\n${c.value}`;
    const list = listOfMark(c.kind) ?? null;
    const campaign = out.get(at) ?? {
      kind: c.kind,
      value: c.value,
      labelled: 0,
      unlabelled: 0,
      good: 0,
      decisions: { allow: 0, challenge: 0, deny: 0 },
      firstSeen: c.firstSeen,
      lastSeen: c.lastSeen,
      list,
      listed: list !== null && listed(list, c.value),
    };
    campaign.labelled += c.abusive;
    campaign.unlabelled += c.events - c.abusive;
    campaign.good += c.good;
    campaign.decisions[c.decision] += c.events;
    campaign.firstSeen = Math.min(campaign.firstSeen, c.firstSeen);
    campaign.lastSeen = Math.max(campaign.lastSeen, c.lastSeen);
    out.set(at, campaign);
  }
  return [...out.values()]
    .filter((c) => c.labelled >= CAMPAIGN_MIN_LABELLED)
    .sort(
      (a, b) =>
        b.labelled - a.labelled ||
        b.unlabelled - a.unlabelled ||
        a.kind.localeCompare(b.kind) ||
        a.value.localeCompare(b.value),
    );
}
