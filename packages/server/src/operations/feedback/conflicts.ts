/**
 * The outcome vocabulary and which outcomes conflict: the one place these rules live (docs/api.md#post-v1feedback-and-the-ledger;
 * the contract names these values and leaves the full matrix to Warden).
 */
export const OUTCOMES = [
  "credit_burn",
  "multi_account_cluster",
  "abuse_confirmed",
  "converted",
  "false_positive",
  "chargeback",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const UNITS = ["usd", "credits", "count"] as const;
export const SOURCES = [
  "billing",
  "usage_metering",
  "trust_queue",
  "manual_review",
  "customer_system",
  "automated_detector",
] as const;

/**
 * Conflicting pairs, symmetric: whichever arrives second is quarantined while the first is effective.
 * - false_positive (an abuse signal was reviewed and found not to be abuse) against every abuse label;
 * - converted against abuse_confirmed (so converted, then abuse_confirmed, leaves converted effective).
 * Everything else coexists, e.g. credit_burn with converted, or chargeback with converted.
 */
const CONFLICTS: readonly (readonly [Outcome, Outcome])[] = [
  ["false_positive", "abuse_confirmed"],
  ["false_positive", "multi_account_cluster"],
  ["false_positive", "credit_burn"],
  ["false_positive", "chargeback"],
  ["converted", "abuse_confirmed"],
];

export function conflictingOutcomes(outcome: Outcome): Outcome[] {
  return CONFLICTS.flatMap(([a, b]) => (a === outcome ? [b] : b === outcome ? [a] : []));
}

/**
 * The outcomes that say an event was abuse: exactly those false_positive contradicts (docs/api.md#post-v1feedback-and-the-ledger). The console labels an event abusive when one of its effective outcomes is one of these.
 */
export const ABUSE_OUTCOMES: readonly Outcome[] = conflictingOutcomes("false_positive");

/**
 * The outcomes that say an attempt was a good user's: it converted, or a review found it was not
 * abuse. The console's campaigns count them as a rule's collateral.
 */
export const GOOD_OUTCOMES: readonly Outcome[] = ["converted", "false_positive"];
