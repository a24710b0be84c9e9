import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError, ErrorResponse } from "../../errors.js";
import { IDEMPOTENCY_HEADER_SCHEMA, idempotencyKeyOf } from "../../http/idempotencyKey.js";
import { applyRateLimit } from "../../http/rateLimit.js";
import type { RouteSettings } from "../../http/types.js";
import { idempotencyOf } from "./idempotency.js";
import { REHEARSAL_TENANT } from "./rehearsal.js";
import { Verdict, VerifyRequest } from "./schema.js";
import { degradedVerdict, type VerifyDeps, verify } from "./verify.js";

export function registerVerify(
  app: FastifyInstance,
  deps: VerifyDeps,
  hooks: {
    onRequest: preHandlerHookHandler[];
    onVerdict: (verdict: Verdict) => void;
    /** The store refused the verdict's event: the key was revoked after it was authenticated. */
    onKeyRevoked: (keyId: string) => void;
    /** Deps for the start-up rehearsal's caller, which write nothing (rehearsal.ts). */
    rehearsal?: VerifyDeps;
  },
): void {
  const settings: RouteSettings = {
    scope: "verify:write",
    operation: "verify",
    onStoreFault: "degrade",
    deadlineMs: deps.deadlineMs,
  };
  app.post<{ Body: VerifyRequest }>(
    "/v1/verify",
    {
      config: { warden: settings },
      onRequest: hooks.onRequest,
      schema: {
        summary: "Decide allow, challenge or deny for an attempted action",
        tags: ["verify"],
        headers: IDEMPOTENCY_HEADER_SCHEMA,
        body: VerifyRequest,
        response: { 200: Verdict, "4xx": ErrorResponse },
        security: [{ bearer: [] }],
      },
    },
    async (request, reply) => {
      const idempotencyKey = idempotencyKeyOf(
        request.headers["idempotency-key"],
        request.body.idempotencyKey,
      );
      const caller = request.caller;
      const d = hooks.rehearsal && caller?.tenant.id === REHEARSAL_TENANT ? hooks.rehearsal : deps;
      // A store fault while authenticating degrades the whole verdict (docs/api.md#degradation).
      if (!caller || request.storeFault) {
        const degraded = degradedVerdict(
          deps,
          caller ?? undefined,
          request.body,
          caller ? idempotencyOf(caller, request.body, idempotencyKey) : undefined,
        );
        hooks.onVerdict(degraded);
        return degraded;
      }
      // The deadline runs from the request's arrival, less the time its body took to arrive (the
      // caller's pace, not Warden's work): the hooks have used part of it.
      const spent = reply.elapsedTime - request.bodyWaitMs;
      const result = await verify(d, caller, request.body, idempotencyKey, d.deadlineMs - spent);
      if (!result.ok && result.code === "invalid_api_key") hooks.onKeyRevoked(caller.key.id);
      if (result.rateLimit) applyRateLimit(reply, result.rateLimit);
      if (!result.ok) throw new ApiError(result.code, result.message);
      if (result.replayed) reply.header("idempotent-replayed", "true");
      hooks.onVerdict(result.verdict);
      return result.verdict;
    },
  );
}
