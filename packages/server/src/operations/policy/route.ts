import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { requireCaller } from "../../http/auth.js";
import type { RouteSettings } from "../../http/types.js";
import { applyDenyRule, type DenyRuleDeps } from "./applyDenyRule.js";
import { DenyRuleAnswer, DenyRuleRequest } from "./schema.js";

/** A write to the tenant's policy; the console may send it with its session cookie (http/auth.ts). */
const denySettings: RouteSettings = {
  scope: "policy:write",
  operation: "policy",
  onStoreFault: "store_unavailable",
  consoleSession: true,
  consoleWrite: true,
  fieldCodes: { list: "invalid_rule", value: "invalid_rule", basedOn: "invalid_rule" },
};

/** The tenant policy's writes from the API: one deny rule at a time (the console's campaigns). */
export function registerPolicy(
  app: FastifyInstance,
  deps: DenyRuleDeps,
  hooks: { onRequest: preHandlerHookHandler[] },
): void {
  app.post<{ Body: DenyRuleRequest }>(
    "/v1/policy/deny",
    {
      config: { warden: denySettings },
      onRequest: hooks.onRequest,
      schema: {
        summary:
          "Append one value to one of the tenant policy's deny lists, stored as the policy's next version",
        tags: ["policy"],
        body: DenyRuleRequest,
        response: { 200: DenyRuleAnswer, "4xx": ErrorResponse, "5xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request) => {
      const result = await applyDenyRule(deps, requireCaller(request).tenant.id, request.body);
      if (!result.ok) throw new ApiError(result.code, result.message);
      return result.answer;
    },
  );
}
