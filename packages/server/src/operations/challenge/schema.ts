import { type Static, type TOptional, type TSchema, type TString, Type } from "@sinclair/typebox";
import { METHODS } from "./methods/registry.js";

/**
 * A proof's members: the method it names, then each method's own, with their descriptions, in the
 * registry's order (methods/registry.ts).
 */
const proofMembers: { method: TOptional<TString> } & Record<string, TOptional<TSchema>> = {
  method: Type.Optional(Type.String({ maxLength: 64 })),
  ...Object.fromEntries(METHODS.flatMap((m) => Object.entries(m.proof.members))),
};
/** Each method's proof, as "<method>: <its form>". */
const proofForms = METHODS.map((m) => `${m.name}: ${m.proof.form}`);

export const ChallengeRequest = Type.Object(
  {
    eventId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "From verify; required to issue." }),
    ),
    session: Type.Optional(Type.String({ description: "Required; at most 128 characters." })),
    prefer: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16, description: "Ordered method hints." }),
    ),
    challengeId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    proof: Type.Optional(
      Type.Object(proofMembers, {
        additionalProperties: true,
        description: `${proofForms.join("; ")}.`,
      }),
    ),
    idempotencyKey: Type.Optional(
      Type.String({
        description:
          "Body form of Idempotency-Key (the header wins): a retried completion replays its answer.",
      }),
    ),
    context: Type.Optional(
      Type.Object(
        { riskTier: Type.Optional(Type.String({ description: "default, elevated or severe." })) },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
export type ChallengeRequest = Static<typeof ChallengeRequest>;

export const ChallengeResponse = Type.Object({
  challengeId: Type.String(),
  method: Type.String(),
  instructions: Type.Record(Type.String(), Type.Unknown()),
  boundTo: Type.String(),
  expiresAt: Type.String({ format: "date-time" }),
  ok: Type.Optional(Type.Boolean()),
  clearedAt: Type.Optional(Type.String({ format: "date-time" })),
});
export type ChallengeResponse = Static<typeof ChallengeResponse>;
