import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { ACTOR_TYPES, ATTEMPT_ENDINGS, DECISIONS, ENFORCEMENT_MODES } from "../../domain.js";
import { literalUnion } from "../../lib/literalUnion.js";
import { EventView, ObservationView } from "../feedback/schema.js";
import { REASON_CATEGORIES, REASON_CODE_LIST } from "../verify/reasonCodes.js";

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Type.String({ format: "date-time" });

/** The period and action every console read takes; `format=csv` answers the table as CSV. */
const scopeFields = {
  since: Type.Optional(Type.String({ format: "date-time", description: "Default: until − 7 days" })),
  until: Type.Optional(Type.String({ format: "date-time", description: "Default: now" })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  format: Type.Optional(literalUnion(["json", "csv"] as const)),
};
export const ScopeQuery = Type.Object(scopeFields, { additionalProperties: false });
export type ScopeQuery = Static<typeof ScopeQuery>;

/**
 * Numbers in a query string arrive as text (the app's validator never coerces types), so they are
 * validated as decimal text here and read with Number() by the route.
 */
const IntegerText = (description: string) => Type.String({ pattern: "^[0-9]{1,7}$", description });
const NumberText = (description: string) =>
  Type.String({ pattern: "^(?:[0-9]{1,7}(?:\\.[0-9]{1,6})?|\\.[0-9]{1,6})$", description });
const Limit = Type.Optional(
  IntegerText("Items per page: JSON 1–500 (default 50); CSV up to 50,000 (default 50,000)"),
);
const Cursor = Type.Optional(
  Type.String({ minLength: 1, maxLength: 200, description: "nextCursor of the previous page" }),
);

export const DecisionsQuery = Type.Object(
  { ...scopeFields, bucket: Type.Optional(literalUnion(["hour", "day"] as const)) },
  { additionalProperties: false },
);
export type DecisionsQuery = Static<typeof DecisionsQuery>;

export const EventsQuery = Type.Object(
  {
    ...scopeFields,
    session: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    decision: Type.Optional(literalUnion(DECISIONS)),
    actorType: Type.Optional(literalUnion(ACTOR_TYPES)),
    emailHash: Type.Optional(
      Type.String({
        pattern: "^[0-9a-fA-F]{64}$",
        description: "SHA-256 hex of the trimmed, lower-cased address (the form verify stores)",
      }),
    ),
    network: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "An IP address or network, no wider than /24 (IPv4) or /48 (IPv6): its truncated network",
      }),
    ),
    reasonCode: Type.Optional(literalUnion(REASON_CODE_LIST)),
    degraded: Type.Optional(literalUnion(["true", "false"] as const)),
    limit: Limit,
    cursor: Cursor,
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

export const PageQuery = Type.Object(
  { ...scopeFields, limit: Limit, cursor: Cursor },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuery>;

export const CalibrationQuery = Type.Object(
  { ...scopeFields, bins: Type.Optional(IntegerText("Number of equal-width risk bins, 2–50 (default 10)")) },
  { additionalProperties: false },
);
export type CalibrationQuery = Static<typeof CalibrationQuery>;

const Weight = Type.Optional(NumberText("A positive relative weight (default: the tenant's current one)"));
export const WhatIfQuery = Type.Object(
  { ...scopeFields, falseAllow: Weight, falseChallenge: Weight, falseDeny: Weight },
  { additionalProperties: false },
);
export type WhatIfQuery = Static<typeof WhatIfQuery>;

const Scope = {
  tenantId: Type.String(),
  since: DateTime,
  until: DateTime,
  action: Nullable(Type.String()),
};
const Counts = Type.Object({ allow: Type.Integer(), challenge: Type.Integer(), deny: Type.Integer() });
const Mistakes = Type.Object({
  falseAllow: Type.Integer(),
  falseChallenge: Type.Integer(),
  falseDeny: Type.Integer(),
});

export const DecisionsReport = Type.Object({
  ...Scope,
  bucket: literalUnion(["hour", "day"] as const),
  rows: Type.Array(
    Type.Object({
      bucketStart: DateTime,
      action: Type.String(),
      decision: literalUnion(DECISIONS),
      actorType: literalUnion(ACTOR_TYPES),
      degraded: Type.Boolean(),
      enforcementMode: literalUnion(ENFORCEMENT_MODES),
      count: Type.Integer(),
    }),
  ),
});
export type DecisionsReport = Static<typeof DecisionsReport>;

export const ChallengesReport = Type.Object({
  ...Scope,
  rows: Type.Array(
    Type.Object({
      method: Type.String(),
      issued: Type.Integer(),
      cleared: Type.Integer(),
      expired: Type.Integer(),
      open: Type.Integer(),
      redeemed: Type.Integer(),
    }),
  ),
});

export const EventSummary = Type.Object({
  eventId: Type.String(),
  createdAt: DateTime,
  action: Type.String(),
  surface: Nullable(Type.String()),
  session: Nullable(Type.String()),
  decision: literalUnion(DECISIONS),
  wouldBeDecision: literalUnion(DECISIONS),
  actorType: literalUnion(ACTOR_TYPES),
  confidence: Type.Number(),
  risk: Nullable(Type.Number()),
  degraded: Type.Boolean(),
  enforcementMode: literalUnion(ENFORCEMENT_MODES),
});
export type EventSummary = Static<typeof EventSummary>;

export const EventPage = Type.Object({
  items: Type.Array(EventSummary),
  nextCursor: Nullable(Type.String()),
});

export const OutcomesReport = Type.Object({
  ...Scope,
  rows: Type.Array(
    Type.Object({
      decision: literalUnion(DECISIONS),
      outcome: Type.String(),
      events: Type.Integer(),
      observations: Type.Integer(),
    }),
  ),
  decisions: Counts,
  quarantinedCount: Type.Integer(),
});

export const QuarantinedPage = Type.Object({
  items: Type.Array(Type.Object({ observation: ObservationView, conflictsWith: Nullable(ObservationView) })),
  nextCursor: Nullable(Type.String()),
});

export const CalibrationReport = Type.Object({
  ...Scope,
  bins: Type.Array(
    Type.Object({
      low: Type.Number(),
      high: Type.Number(),
      events: Type.Integer(),
      labelled: Type.Integer(),
      abusive: Type.Integer(),
      meanRisk: Nullable(Type.Number()),
      observedRate: Nullable(Type.Number()),
      interval: Nullable(Type.Object({ low: Type.Number(), high: Type.Number() })),
    }),
  ),
  events: Type.Integer(),
  labelled: Type.Integer(),
  abusive: Type.Integer(),
});

const Costs3 = Type.Object({
  falseAllow: Type.Number(),
  falseChallenge: Type.Number(),
  falseDeny: Type.Number(),
});
export const WhatIfReport = Type.Object({
  ...Scope,
  costs: Costs3,
  /** What verify uses today for requests that send no weights (the tenant policy's, else 1, 1, 3). */
  currentCosts: Costs3,
  events: Type.Integer(),
  replayed: Type.Integer(),
  kept: Type.Integer(),
  recorded: Counts,
  whatIf: Counts,
  labelled: Type.Integer(),
  expectedCost: Type.Object({ recorded: Type.Number(), whatIf: Type.Number() }),
  mistakes: Type.Object({ recorded: Mistakes, whatIf: Mistakes }),
  policy: Type.Record(Type.String(), Type.Unknown(), {
    description: "The tenant's current policy document with these decisionCosts: for `warden policy set`",
  }),
});

export const AttemptsReport = Type.Object({
  ...Scope,
  bucket: literalUnion(["hour", "day"] as const),
  rows: Type.Array(
    Type.Object({
      bucketStart: DateTime,
      action: Type.String(),
      ending: literalUnion(ATTEMPT_ENDINGS),
      degraded: Type.Boolean(),
      count: Type.Integer(),
    }),
  ),
});
export type AttemptsReport = Static<typeof AttemptsReport>;

/** One attempt: its first verdict and the re-verify that redeemed its clear, each in full. */
export const AttemptView = Type.Object({
  firstEventId: Type.String(),
  reverifyEventId: Nullable(Type.String()),
  ending: literalUnion(ATTEMPT_ENDINGS),
  first: EventView,
  reverify: Nullable(EventView),
});
export type AttemptView = Static<typeof AttemptView>;

/** Events in scope per reason code, with its category and the decisions given. */
export const ReasonsReport = Type.Object({
  ...Scope,
  rows: Type.Array(
    Type.Object({
      code: literalUnion(REASON_CODE_LIST),
      category: literalUnion(REASON_CATEGORIES),
      events: Type.Integer(),
      decisions: Counts,
    }),
  ),
});
export type ReasonsReport = Static<typeof ReasonsReport>;

export const ActionsReport = Type.Object({
  tenantId: Type.String(),
  actions: Type.Array(Type.String(), { description: "Every action the tenant has events for, in order" }),
});
