/**
 * Warden's domain vocabulary: the contract's closed sets (docs/api.md) (decisions, actor types, enforcement modes, API
 * key scopes, challenge methods, observation statuses) and the event a verdict is recorded as. Each is
 * written once; the store's contract, the operations and the response schemas all derive from it.
 */

/** What an API key may do (docs/api.md#verdicttoken). */
export type Scope =
  | "verify:write"
  | "challenge:write"
  | "feedback:write"
  | "ledger:read"
  | "ledger:write"
  | "policy:write";
export const ALL_SCOPES: readonly Scope[] = [
  "verify:write",
  "challenge:write",
  "feedback:write",
  "ledger:read",
  "ledger:write",
  "policy:write",
];

/** A verdict's decision, the actor type it names and whether it was enforced (docs/api.md#post-v1verify). */
export const DECISIONS = ["allow", "challenge", "deny"] as const;
export type Decision = (typeof DECISIONS)[number];
export const ACTOR_TYPES = ["human", "agent_principal", "agent_abusive", "unknown"] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];
export const ENFORCEMENT_MODES = ["enforce", "log_only"] as const;
export type EnforcementMode = (typeof ENFORCEMENT_MODES)[number];
/**
 * What reached an event's engine decision: the model (replayable under other weights by the console's
 * what-if), a tenant rule (lists, per-action agent rules), an honoured clear, or a degradation.
 */
export const DECIDERS = ["model", "rule", "clear", "degraded"] as const;
export type Decider = (typeof DECIDERS)[number];

/**
 * What the console's campaigns group abusive attempts by (event.signals): the page environment's
 * digest, the request shape's digest, the JA4 TLS fingerprint, the user agent, the email domain and
 * the network (/24 or /48).
 */
export const CAMPAIGN_MARKS = ["environment", "shape", "tls", "userAgent", "emailDomain", "network"] as const;
export type CampaignMark = (typeof CAMPAIGN_MARKS)[number];

/** Relative, dimensionless weights of the three mistakes (docs/api.md#tenant-policy). */
export interface DecisionCosts {
  falseAllow: number;
  falseChallenge: number;
  falseDeny: number;
}

/** The abuse estimate a scored event was decided on, with what the decision rule needs to replay it. */
export interface RecordedRisk {
  estimate: number;
  low: number;
  high: number;
  /** A finding raised the risk above the prior: without one the model never denies (decide.ts). */
  raised: boolean;
}

/**
 * What a degraded event records of the scoring it never ran (signals.worstCase): the actor type and
 * risk estimate of the request's stateless evidence with every velocity counter it would hit at its
 * cap, the most any scored verdict of the same request could reach. A challenge on the event is
 * sealed at that tier (docs/security-model.md, invariant 12).
 */
export interface WorstCase {
  actorType: ActorType;
  riskEstimate: number;
  /** The attempt had a shape or environment that could have been surging (a campaign: severe). */
  campaign?: true;
}

/** One verify call, as recorded. Holds only protected forms of personal data (hashes, truncations). */
export interface EventRecord {
  id: string;
  tenantId: string;
  keyId: string;
  createdAt: number;
  action: string;
  surface: string | null;
  session: string | null;
  decision: Decision;
  /** The decision the engine reached before log_only turned it into an observation. */
  wouldBeDecision: Decision;
  actorType: ActorType;
  confidence: number;
  reasons: string[];
  degraded: boolean;
  enforcementMode: EnforcementMode;
  costs: DecisionCosts;
  /** Protected signal values (hashes, truncated networks, flags); never raw email or IP. */
  signals: Record<string, unknown>;
  engineVersion: string;
  policyVersion: string;
  /** Fingerprint of the attempt (action and identifying subject fields; operations/verify/attempt.ts). */
  attempt: string | null;
  decidedBy: Decider;
  /** Null when nothing was scored (a degraded verdict, a clear that short-circuited scoring). */
  risk: RecordedRisk | null;
  /** The signals' email hash (SHA-256 hex of the trimmed, lower-cased address), kept to search by. */
  emailHash: string | null;
  /** The signals' truncated network ("203.0.113.0/24", "2001:db8:1::/48"), kept to search by. */
  network: string | null;
  /** The codes of the verdict's reasonDetails, each once, in their order. */
  reasonCodes: string[];
}

/**
 * The friction a challenge asks for: the API's closed set (docs/api.md#post-v1challenge-and-re-verify).
 * Each one issued is a method of operations/challenge/methods/ (registry.ts); email_otp is named by
 * the API and never issued.
 */
export const CHALLENGE_METHODS = [
  "payment_preauth",
  "proof_of_work",
  "device_attestation",
  "web_bot_auth_stepup",
  "email_otp",
] as const;
export type ChallengeMethod = (typeof CHALLENGE_METHODS)[number];

/**
 * Only "effective" counts toward any total. "rejected": a quarantined observation a person rejected;
 * "superseded": an effective observation that an accepted one contradicted. Both are kept for audit.
 */
export const OBSERVATION_STATUSES = ["effective", "quarantined", "rejected", "superseded"] as const;
export type ObservationStatus = (typeof OBSERVATION_STATUSES)[number];

/** A person's answer to a quarantined observation. */
export const RESOLUTIONS = ["accept", "reject"] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/**
 * How an attempt ended (docs/api.md, "Attempts"): its first verdict allowed or denied it, or it was
 * challenged and then a re-verify redeemed the clear (cleared), or no clear was redeemed (yet).
 */
export const ATTEMPT_ENDINGS = ["allowed", "cleared", "challenged", "denied"] as const;
export type AttemptEnding = (typeof ATTEMPT_ENDINGS)[number];

/**
 * How long events are kept, in whole days (WARDEN_RETENTION_DAYS, a tenant policy's retentionDays):
 * at least a week, at most a hundred years; "forever" keeps them.
 */
export const RETENTION_DAYS_RANGE = Object.freeze({ min: 7, max: 36_500 });
