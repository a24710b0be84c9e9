import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import { ApiError } from "../../errors.js";
import type { RouteSettings } from "../../http/types.js";
import { ErrorResponse, Verdict, VerifyRequest } from "./schema.js";
import { degradedVerdict, type VerifyDeps, verify } from "./verify.js";

/** Idempotency keys: 1..255 printable ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/** The header wins over the body member (spec, verify). */
export function idempotencyKeyOf(header: unknown, body: unknown): string | undefined {
  const key = typeof header === "string" ? header : typeof body === "string" ? body : undefined;
  if (header !== undefined && typeof header !== "string") throw new ApiError("invalid_idempotency_key");
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) throw new ApiError("invalid_idempotency_key");
  return key;
}

const settings: RouteSettings = { scope: "verify:write", operation: "verify", onStoreFault: "degrade" };

export function registerVerify(
  app: FastifyInstance,
  deps: VerifyDeps,
  hooks: { onRequest: preHandlerHookHandler[] },
): void {
  app.post<{ Body: VerifyRequest }>(
    "/v1/verify",
    {
      config: { warden: settings },
      onRequest: hooks.onRequest,
      schema: {
        summary: "Decide allow, challenge or deny for an attempted action",
        tags: ["verify"],
        headers: {
          type: "object",
          properties: {
            "idempotency-key": { type: "string", description: "Wins over body idempotencyKey." },
          },
        },
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
      // A store fault while authenticating or rate limiting degrades the whole verdict (spec, degradation).
      if (!caller || request.storeFault) return degradedVerdict(deps, caller ?? undefined, request.body);
      const result = await verify(deps, caller, request.body, idempotencyKey);
      if (!result.ok) throw new ApiError(result.code, result.message);
      if (result.replayed) reply.header("idempotent-replayed", "true");
      return result.verdict;
    },
  );
}
