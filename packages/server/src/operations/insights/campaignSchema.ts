import { type Static, Type } from "@sinclair/typebox";
import { CAMPAIGN_MARKS } from "../../domain.js";
import { literalUnion } from "../../lib/literalUnion.js";
import { RULE_LISTS } from "../policy/denyRule.js";

const DateTime = Type.String({ format: "date-time" });
const Counts = Type.Object({ allow: Type.Integer(), challenge: Type.Integer(), deny: Type.Integer() });
const PolicyVersion = Type.String({ description: '"v<n>", or "default" for a tenant that never set one' });

export const CampaignsQuery = Type.Object(
  {
    since: Type.Optional(Type.String({ format: "date-time", description: "Default: until − 7 days" })),
    until: Type.Optional(Type.String({ format: "date-time", description: "Default: now" })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    format: Type.Optional(literalUnion(["json", "csv"] as const)),
    limit: Type.Optional(
      Type.String({ pattern: "^[0-9]{1,3}$", description: "Campaigns to answer, 1–100 (default 20)" }),
    ),
  },
  { additionalProperties: false },
);
export type CampaignsQuery = Static<typeof CampaignsQuery>;

export const CampaignsReport = Type.Object({
  tenantId: Type.String(),
  since: DateTime,
  until: DateTime,
  action: Type.Union([Type.String(), Type.Null()]),
  /** The abusive attempts the campaigns were drawn from (newest first, at most 5,000). */
  abusiveAttempts: Type.Integer(),
  /** Whether there were more abusive attempts than were read. */
  truncated: Type.Boolean(),
  policyVersion: PolicyVersion,
  rows: Type.Array(
    Type.Object({
      kind: literalUnion(CAMPAIGN_MARKS),
      value: Type.String(),
      labelled: Type.Integer({ description: "Attempts bearing it with an effective abuse outcome" }),
      unlabelled: Type.Integer({ description: "Attempts bearing it without one" }),
      good: Type.Integer({
        description: "Of the unlabelled, those with an effective converted or false_positive: the collateral",
      }),
      decisions: Counts,
      firstSeen: DateTime,
      lastSeen: DateTime,
      list: Type.Union([literalUnion(RULE_LISTS), Type.Null()], {
        description: "The deny list that would turn it away; null for a mark no deny list takes (none today)",
      }),
      listed: Type.Boolean({ description: "Whether that deny list names it already" }),
    }),
  ),
});
export type CampaignsReport = Static<typeof CampaignsReport>;

export const RuleWhatIfQuery = Type.Object(
  {
    since: Type.Optional(Type.String({ format: "date-time", description: "Default: until − 30 days" })),
    until: Type.Optional(Type.String({ format: "date-time", description: "Default: now" })),
    list: literalUnion(RULE_LISTS),
    value: Type.String({ minLength: 1, maxLength: 2048 }),
  },
  { additionalProperties: false },
);
export type RuleWhatIfQuery = Static<typeof RuleWhatIfQuery>;

export const RuleWhatIfReport = Type.Object({
  tenantId: Type.String(),
  since: DateTime,
  until: DateTime,
  list: literalUnion(RULE_LISTS),
  value: Type.String({ description: "The value as the list would keep it" }),
  events: Type.Integer({ description: "Attempts of the period the rule would have matched" }),
  decisions: Counts,
  /** Matched attempts the engine did not deny: the rule's change. */
  newlyDenied: Type.Integer(),
  abusive: Type.Integer(),
  good: Type.Integer(),
  unlabelled: Type.Integer(),
  policyVersion: PolicyVersion,
  listed: Type.Boolean(),
});
export type RuleWhatIfReport = Static<typeof RuleWhatIfReport>;
