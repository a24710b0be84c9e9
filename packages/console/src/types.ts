/** The shapes of the console's HTTP contract (.exp/console-contract.md), as the UI reads them. */

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

export interface Session {
  tenantId: string;
  keyId: string;
  expiresAt: string;
}

export interface RangeEcho {
  tenantId: string;
  since: string;
  until: string;
  action: string | null;
}

export interface DecisionRow {
  bucketStart: string;
  action: string;
  decision: string;
  actorType: string;
  degraded: boolean;
  enforcementMode: string;
  count: number;
}
export interface DecisionStats extends RangeEcho {
  bucket: "hour" | "day";
  rows: DecisionRow[];
}

export interface ChallengeRow {
  method: string;
  issued: number;
  cleared: number;
  expired: number;
  open: number;
  redeemed: number;
}
export interface ChallengeStats extends RangeEcho {
  rows: ChallengeRow[];
}

export interface EventSummary {
  eventId: string;
  createdAt: string;
  action: string;
  surface: string | null;
  session: string | null;
  decision: string;
  wouldBeDecision: string;
  actorType: string;
  confidence: number;
  risk: number | null;
  degraded: boolean;
  enforcementMode: string;
}
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Observation {
  feedbackId: string;
  eventId: string;
  outcome: string;
  value: number | null;
  unit: string | null;
  source: string | null;
  observedAt: string;
  receivedAt: string;
  status: "effective" | "quarantined";
  conflictsWith: string | null;
}

export interface ChallengeView {
  challengeId: string;
  method: string;
  boundTo: string;
  issuedAt: string;
  expiresAt: string;
  clearedAt: string | null;
  redeemedAt: string | null;
  difficulty: number | null;
}

export interface Principal {
  resolved: boolean;
  operator: string;
  onBehalfOf: string;
  identityBasis: string[];
}

export interface Costs {
  falseAllow: number;
  falseChallenge: number;
  falseDeny: number;
}

export interface EventDetail {
  event: {
    eventId: string;
    createdAt: string;
    action: string;
    surface: string | null;
    session: string | null;
    decision: string;
    wouldBeDecision: string;
    actorType: string;
    confidence: number;
    reasons: string[];
    degraded: boolean;
    enforcementMode: string;
    costs: Costs;
    signals: Record<string, unknown>;
    engineVersion: string;
    policyVersion: string;
    principal?: Principal;
    tokenClaims?: Record<string, unknown>;
  };
  challenges?: ChallengeView[];
  observations: Observation[];
}

export interface OutcomeRow {
  decision: string;
  outcome: string;
  events: number;
  observations: number;
}
export interface OutcomeStats extends RangeEcho {
  rows: OutcomeRow[];
  decisions: Record<string, number>;
  quarantinedCount: number;
}

export interface QuarantinedItem {
  observation: Observation;
  conflictsWith: Observation | null;
}

export interface Interval {
  low: number;
  high: number;
}
export interface CalibrationBin {
  low: number;
  high: number;
  events: number;
  labelled: number;
  abusive: number;
  meanRisk: number | null;
  observedRate: number | null;
  interval: Interval | null;
}
export interface CalibrationStats extends RangeEcho {
  bins: CalibrationBin[];
  events: number;
  labelled: number;
  abusive: number;
}

export type DecisionCounts = Record<Decision, number>;
export interface WhatIfStats extends RangeEcho {
  costs: Costs;
  currentCosts: Costs;
  events: number;
  replayed: number;
  kept: number;
  recorded: DecisionCounts;
  whatIf: DecisionCounts;
  labelled: number;
  expectedCost: { recorded: number; whatIf: number };
  mistakes: { recorded: Costs; whatIf: Costs };
  policy: unknown;
}
