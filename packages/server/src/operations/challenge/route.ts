import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { requireCaller } from "../../http/auth.js";
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
        response: { 200: ChallengeResponse, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request) => {
      const result = await challenge(deps, requireCaller(request), request.body);
      if (!result.ok) throw new ApiError(result.code, result.message);
      return result.challenge;
    },
  );
}
