import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError } from "../../errors.js";
import type { RouteSettings } from "../../http/types.js";
import { ErrorResponse } from "../verify/schema.js";
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
      // The authentication hook always sets the caller on this route (it never degrades).
      if (!request.caller) throw new ApiError("invalid_api_key");
      const result = await challenge(deps, request.caller, request.body);
      if (!result.ok) throw new ApiError(result.code, result.message);
      return result.challenge;
    },
  );
}
