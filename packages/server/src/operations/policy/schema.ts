import { type Static, Type } from "@sinclair/typebox";
import { literalUnion } from "../../lib/literalUnion.js";
import { RULE_LISTS } from "./denyRule.js";

const PolicyVersion = Type.String({
  pattern: "^(?:default|v[0-9]{1,9})$",
  description: 'A policy version as events record it: "v<n>", or "default" for a tenant that never set one',
});

export const DenyRuleRequest = Type.Object(
  {
    list: literalUnion(RULE_LISTS),
    value: Type.String({ minLength: 1, maxLength: 2048 }),
    basedOn: Type.Optional(PolicyVersion),
  },
  { additionalProperties: false },
);
export type DenyRuleRequest = Static<typeof DenyRuleRequest>;

export const DenyRuleAnswer = Type.Object({
  tenantId: Type.String(),
  list: literalUnion(RULE_LISTS),
  value: Type.String(),
  /** False when the list named the value already: no version was stored. */
  added: Type.Boolean(),
  policyVersion: PolicyVersion,
  previousVersion: PolicyVersion,
});
export type DenyRuleAnswer = Static<typeof DenyRuleAnswer>;
