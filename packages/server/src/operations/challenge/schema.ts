import { type Static, Type } from "@sinclair/typebox";

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
      Type.Object(
        {
          method: Type.Optional(Type.String({ maxLength: 64 })),
          nonce: Type.Optional(Type.String()),
          setupIntentId: Type.Optional(Type.String({ maxLength: 255 })),
          headers: Type.Optional(
            Type.Record(Type.String(), Type.String({ maxLength: 8192 }), {
              description: "web_bot_auth_stepup: the signed request's headers.",
            }),
          ),
          registration: Type.Optional(
            Type.Object(
              {},
              {
                additionalProperties: true,
                description:
                  "device_attestation: the credential from navigator.credentials.create, as its toJSON() (RegistrationResponseJSON).",
              },
            ),
          ),
          assertion: Type.Optional(
            Type.Object(
              {},
              {
                additionalProperties: true,
                description:
                  "device_attestation: the credential from navigator.credentials.get with the new credential, as its toJSON() (AuthenticationResponseJSON).",
              },
            ),
          ),
        },
        {
          additionalProperties: true,
          description:
            "proof_of_work: { nonce } (at most 64 characters); payment_preauth: { method: provider_setup_intent, setupIntentId }; web_bot_auth_stepup: { method: web_bot_auth, headers }; device_attestation: { method: webauthn, registration, assertion } (the two WebAuthn credentials' toJSON()).",
        },
      ),
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
