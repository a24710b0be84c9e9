import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { requireCaller } from "../../http/auth.js";
import { IDEMPOTENCY_HEADER_SCHEMA, idempotencyKeyOf } from "../../http/idempotencyKey.js";
import type { RouteSettings } from "../../http/types.js";
import { type ChallengeDeps, challenge } from "./challenge.js";
import { ChallengeRequest, ChallengeResponse } from "./schema.js";

const settings: RouteSettings = {
  scope: "challenge:write",
  operation: "challenge",
  onStoreFault: "challenge_unavailable",
  fieldCodes: { session: "session_required" },
};

export function registerChallenge(
  app: FastifyInstance,
  deps: ChallengeDeps,
  hooks: { onRequest: preHandlerHookHandler[] },
): void {
  app.post<{ Body: ChallengeRequest }>(
    "/v1/challenge",
    {
      config: { warden: settings },
      onRequest: hooks.onRequest,
      schema: {
        summary: "Issue a challenge bound to a session, or complete one with a proof",
        tags: ["challenge"],
        body: ChallengeRequest,
        headers: IDEMPOTENCY_HEADER_SCHEMA,
        response: { 200: ChallengeResponse, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request.headers["idempotency-key"], request.body.idempotencyKey);
      const result = await challenge(deps, requireCaller(request), request.body, key);
      if (!result.ok) throw new ApiError(result.code, result.message);
      if (result.replayed) reply.header("idempotent-replayed", "true");
      return result.challenge;
    },
  );
}
