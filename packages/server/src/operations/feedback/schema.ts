import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { OBSERVATION_STATUSES, RESOLUTIONS } from "../../domain.js";
import { literalUnion } from "../../lib/literalUnion.js";
import { OUTCOMES, SOURCES, UNITS } from "./conflicts.js";

/** A string enum that keeps its literal type (TypeBox's union of mapped literals would widen it). */
const literals = <T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values] });

export const FeedbackRequest = Type.Object(
  {
    eventId: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "From an earlier verify of this tenant.",
    }),
    outcome: literals(OUTCOMES),
    value: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: "Magnitude in unit." })),
    unit: Type.Optional(literals(UNITS)),
    source: Type.Optional(literals(SOURCES)),
    observedAt: Type.Optional(Type.String({ format: "date-time", description: "ISO 8601 with an offset." })),
    idempotencyKey: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type FeedbackRequest = Static<typeof FeedbackRequest>;

export const FeedbackAck = Type.Object({ ok: Type.Boolean(), eventId: Type.String() });
export type FeedbackAck = Static<typeof FeedbackAck>;

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A person's resolution of a quarantined observation, as recorded (append-only). */
export const ResolutionRecord = Type.Object({
  resolution: literalUnion(RESOLUTIONS),
  note: Nullable(Type.String()),
  /** The id of the API key that resolved it (the console's: its session's key). */
  resolvedBy: Type.String(),
  resolvedAt: Type.String(),
  /** The effective observations an accept superseded (empty on reject). */
  superseded: Type.Array(Type.String()),
});
export type ResolutionRecord = Static<typeof ResolutionRecord>;

export const ObservationView = Type.Object({
  feedbackId: Type.String(),
  eventId: Type.String(),
  outcome: Type.String(),
  value: Type.Union([Type.Number(), Type.Null()]),
  unit: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.String(), Type.Null()]),
  observedAt: Type.String(),
  receivedAt: Type.String(),
  status: literalUnion(OBSERVATION_STATUSES),
  conflictsWith: Type.Union([Type.String(), Type.Null()]),
  /** Set once a quarantined observation was accepted (now effective) or rejected. */
  resolution: Nullable(ResolutionRecord),
  /** When superseded: the accepted observation that contradicted it (its resolution says who and when). */
  supersededBy: Nullable(Type.String()),
});
export type ObservationView = Static<typeof ObservationView>;

export const ResolutionRequest = Type.Object(
  {
    resolution: Type.Unsafe<(typeof RESOLUTIONS)[number]>({
      type: "string",
      enum: [...RESOLUTIONS],
      description: "accept: the observation counts; reject: it never counts.",
    }),
    note: Type.Optional(Type.String({ maxLength: 1000, description: "Why, for the audit record." })),
  },
  { additionalProperties: false },
);
export type ResolutionRequest = Static<typeof ResolutionRequest>;

export const ResolutionParams = Type.Object({ feedbackId: Type.String() });
export type ResolutionParams = Static<typeof ResolutionParams>;

/** The answer to a resolution: the record, and the observation's status now. */
export const ResolutionView = Type.Composite([
  Type.Object({
    feedbackId: Type.String(),
    eventId: Type.String(),
    status: literalUnion(OBSERVATION_STATUSES),
  }),
  ResolutionRecord,
]);
export type ResolutionView = Static<typeof ResolutionView>;

const Totals = Type.Record(Type.String(), Type.Number(), {
  description: "Sums of values by unit, never converted.",
});

export const LedgerSummary = Type.Object({
  tenantId: Type.String(),
  since: Type.Union([Type.String(), Type.Null()]),
  until: Type.Union([Type.String(), Type.Null()]),
  action: Type.Union([Type.String(), Type.Null()]),
  outcomes: Type.Record(
    Type.String(),
    Type.Object({
      effective: Type.Integer(),
      quarantined: Type.Integer(),
      /** Never counted: rejected quarantined ones, and effective ones an accepted one superseded. */
      rejected: Type.Integer(),
      superseded: Type.Integer(),
      totals: Totals,
    }),
  ),
  ledgerUsdTotal: Type.Number({ description: "Effective credit_burn values in usd." }),
  creditBurnOtherUnits: Totals,
  firstYearArrUsd: Type.Number({ description: "Effective converted values in usd." }),
  quarantined: Type.Array(
    Type.Object({
      observation: ObservationView,
      conflictsWith: Type.Union([ObservationView, Type.Null()]),
    }),
  ),
});
export type LedgerSummary = Static<typeof LedgerSummary>;

export const LedgerQuery = Type.Object(
  {
    since: Type.Optional(Type.String({ format: "date-time" })),
    until: Type.Optional(Type.String({ format: "date-time" })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  // An unknown parameter (a misspelt `sinse`) is 400 invalid_query, as on every other read.
  { additionalProperties: false },
);
export type LedgerQuery = Static<typeof LedgerQuery>;

const Principal = Type.Object({
  resolved: Type.Boolean(),
  operator: Type.String(),
  onBehalfOf: Type.String(),
  identityBasis: Type.Array(Type.String()),
});
const ChallengeView = Type.Object({
  challengeId: Type.String(),
  method: Type.String(),
  boundTo: Type.String(),
  difficulty: Nullable(Type.Integer()),
  issuedAt: Type.String(),
  expiresAt: Type.String(),
  clearedAt: Nullable(Type.String()),
  redeemedAt: Nullable(Type.String()),
});
export const EventView = Type.Object({
  event: Type.Object({
    eventId: Type.String(),
    createdAt: Type.String(),
    action: Type.String(),
    surface: Nullable(Type.String()),
    session: Nullable(Type.String()),
    decision: Type.String(),
    wouldBeDecision: Type.String(),
    actorType: Type.String(),
    confidence: Type.Number(),
    reasons: Type.Array(Type.String()),
    degraded: Type.Boolean(),
    enforcementMode: Type.String(),
    costs: Type.Object({
      falseAllow: Type.Number(),
      falseChallenge: Type.Number(),
      falseDeny: Type.Number(),
    }),
    signals: Type.Record(Type.String(), Type.Unknown()),
    engineVersion: Type.String(),
    policyVersion: Type.String(),
    /** What decided: the model, a tenant rule, an honoured clear or a degradation. */
    decidedBy: Type.String(),
    principal: Principal,
    /** The verdictToken's claims as issued (iat and exp from the event's time and today's lifetime). */
    tokenClaims: Type.Record(Type.String(), Type.Unknown()),
  }),
  challenges: Type.Array(ChallengeView),
  observations: Type.Array(ObservationView),
});
export type EventView = Static<typeof EventView>;
