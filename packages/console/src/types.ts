/**
 * The console's vocabularies, and the shapes of the API it reads: those are taken from the types the
 * client SDK generates from the server's OpenAPI document (packages/client/src/generated), so a shape
 * is written once, in the server's schemas, and a change there that the UI does not follow fails
 * `npm run typecheck`.
 */
import type { paths } from "../../client/src/generated/openapi.js";

export const DECISIONS = ["allow", "challenge", "deny"] as const;
export type Decision = (typeof DECISIONS)[number];

export const ACTOR_TYPES = ["human", "agent_principal", "agent_abusive", "unknown"] as const;
export const ENFORCEMENT_MODES = ["enforce", "log_only"] as const;

export const OUTCOMES = [
  "abuse_confirmed",
  "multi_account_cluster",
  "credit_burn",
  "chargeback",
  "converted",
  "false_positive",
] as const;
/** The outcomes that count as abuse (calibration's "abusive"). */
export const ABUSE_OUTCOMES: readonly string[] = [
  "abuse_confirmed",
  "multi_account_cluster",
  "credit_burn",
  "chargeback",
];
/** The outcomes that say a good user met friction. */
export const GOOD_OUTCOMES: readonly string[] = ["converted", "false_positive"];

/** The JSON body of a 200 answer to a GET (or POST) of `path`. */
type Ok<P extends keyof paths, M extends "get" | "post" = "get"> = paths[P][M] extends {
  responses: { 200: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;

export type Session = Ok<"/console/session">;
export type DecisionStats = Ok<"/v1/stats/decisions">;
export type DecisionRow = DecisionStats["rows"][number];
export type RangeEcho = Pick<DecisionStats, "tenantId" | "since" | "until" | "action">;
export type AttemptStats = Ok<"/v1/stats/attempts">;
export type AttemptRow = AttemptStats["rows"][number];
export type AttemptDetail = Ok<"/v1/attempts/{eventId}">;
export type ChallengeStats = Ok<"/v1/stats/challenges">;
export type ChallengeRow = ChallengeStats["rows"][number];
export type EventSummary = Ok<"/v1/events">["items"][number];
export type ReasonStats = Ok<"/v1/stats/reasons">;
export type ReasonRow = ReasonStats["rows"][number];
export type ActionList = Ok<"/v1/stats/actions">;
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
export type EventDetail = Ok<"/v1/events/{eventId}">;
export type Observation = EventDetail["observations"][number];
export type ChallengeView = EventDetail["challenges"][number];
export type Principal = EventDetail["event"]["principal"];
export type OutcomeStats = Ok<"/v1/stats/outcomes">;
export type OutcomeRow = OutcomeStats["rows"][number];
export type QuarantinedItem = Ok<"/v1/feedback/quarantined">["items"][number];
/** The answer to resolving a quarantined observation (accept or reject). */
export type ResolutionAnswer = Ok<"/v1/feedback/{feedbackId}/resolution", "post">;
export type ObservationResolution = NonNullable<Observation["resolution"]>;
export type CalibrationStats = Ok<"/v1/stats/calibration">;
export type CalibrationBin = CalibrationStats["bins"][number];
export type Interval = NonNullable<CalibrationBin["interval"]>;
export type WhatIfStats = Ok<"/v1/stats/what-if">;
export type Costs = WhatIfStats["costs"];
export type DecisionCounts = Record<Decision, number>;
export type CampaignStats = Ok<"/v1/stats/campaigns">;
export type CampaignRow = CampaignStats["rows"][number];
export type RuleWhatIf = Ok<"/v1/stats/what-if-rule">;
/** The answer to applying a deny rule. */
export type DenyRuleAnswer = Ok<"/v1/policy/deny", "post">;
export type RuleList = RuleWhatIf["list"];
