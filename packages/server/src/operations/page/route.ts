import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import type { RouteSettings } from "../../http/types.js";
import { issuePageToken, type PageTokenDeps } from "./pageTokens.js";
import { PageTokenRequest, PageTokenResponse } from "./schema.js";

/**
 * POST /v1/page-tokens: evidence that a form's page ran, asked for by the integrator's server when the
 * page loads (docs/api.md, page evidence). Scope verify:write: it only feeds verify.
 */
export function registerPageTokens(
  app: FastifyInstance,
  deps: PageTokenDeps,
  hooks: { onRequest: preHandlerHookHandler[] },
): void {
  const settings: RouteSettings = {
    scope: "verify:write",
    operation: "page_token",
    onStoreFault: "page_token_unavailable",
  };
  app.post<{ Body: PageTokenRequest }>(
    "/v1/page-tokens",
    {
      config: { warden: settings },
      onRequest: hooks.onRequest,
      schema: {
        summary: "Issue a page token for a form's page as it loads",
        tags: ["verify"],
        body: PageTokenRequest,
        response: { 200: PageTokenResponse, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request) => {
      const caller = request.caller;
      if (!caller) throw new ApiError("page_token_unavailable");
      const result = await issuePageToken(deps, caller, request.body);
      if (!result.ok) throw new ApiError(result.code, result.message);
      return {
        pageToken: result.pageToken,
        expiresAt: result.expiresAt,
        ...(result.probe && { probe: result.probe }),
        ...(result.pow && { pow: result.pow }),
      };
    },
  );
}
