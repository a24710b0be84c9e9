import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, type ErrorCode, errorBody } from "../errors.js";
import { StoreUnavailableError } from "../store/interfaces.js";
import { isRequiredMember } from "./optionalNulls.js";
import type { RouteSettings } from "./types.js";

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Fastify's own failures, by code, to Warden's catalogue. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported_media_type",
  FST_ERR_CTP_BODY_TOO_LARGE: "payload_too_large",
  FST_ERR_CTP_EMPTY_JSON_BODY: "missing_required_field",
  FST_ERR_CTP_INVALID_JSON_BODY: "invalid_json",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "invalid_json",
  FST_ERR_CTP_INVALID_TYPE: "unsupported_media_type",
};

function fieldName(issue: ValidationIssue): string {
  const path = issue.instancePath.replace(/^\//, "").replaceAll("/", ".");
  if (issue.keyword === "required") {
    const missing = String(issue.params.missingProperty ?? "");
    return path ? `${path}.${missing}` : missing;
  }
  return path || "body";
}

/**
 * JSON Schema failures: an absent (or null) required member is missing_required_field; the rest take
 * the route's code for that field, or invalid_field. (Null optional members were dropped before
 * validation: optionalNulls.ts.)
 */
export function validationError(
  issues: readonly ValidationIssue[],
  body: unknown,
  fieldCodes: Readonly<Record<string, ErrorCode>> = {},
  bodySchema?: unknown,
): ApiError {
  const issue = issues[0];
  if (!issue) return new ApiError("invalid_field");
  const field = fieldName(issue);
  if (issue.keyword === "required") return new ApiError("missing_required_field", `${field} is required.`);
  if (issue.instancePath === "" && (body === undefined || body === null)) {
    return new ApiError("missing_required_field", "A JSON body with the required fields is required.");
  }
  const value = issue.instancePath
    .split("/")
    .slice(1)
    .reduce<unknown>(
      (v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
      body,
    );
  if (value === null && issue.keyword === "type" && isRequiredMember(bodySchema, issue.instancePath))
    return new ApiError("missing_required_field", `${field} is required.`);
  return new ApiError(fieldCodes[field] ?? "invalid_field", `${field} ${issue.message ?? "is invalid"}.`);
}

/** Turns any failure into an ApiError; unexpected ones keep no internal message. */
export function toApiError(
  err: unknown,
  body: unknown,
  settings?: RouteSettings,
  bodySchema?: unknown,
): ApiError {
  if (err instanceof ApiError) return err;
  const fe = err as Partial<FastifyError> & { validation?: ValidationIssue[] };
  // Any query string the route's schema refuses (a bad value, an unknown parameter) is invalid_query.
  if (Array.isArray(fe.validation) && fe.validationContext === "querystring") {
    const issue = fe.validation[0];
    const name =
      issue?.params && "additionalProperty" in issue.params ? issue.params.additionalProperty : undefined;
    return new ApiError(
      "invalid_query",
      name === undefined
        ? `${fe.message ?? "A query parameter is invalid"}.`
        : `Unknown query parameter ${String(name)}.`,
    );
  }
  if (Array.isArray(fe.validation))
    return validationError(fe.validation, body, settings?.fieldCodes, bodySchema);
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return new ApiError(mapped);
  if (err instanceof SyntaxError || (typeof fe.statusCode === "number" && fe.statusCode === 400)) {
    return new ApiError("invalid_json");
  }
  if (err instanceof StoreUnavailableError) {
    const code =
      settings && settings.onStoreFault !== "degrade" ? settings.onStoreFault : "store_unavailable";
    return new ApiError(code);
  }
  return new ApiError("internal_error");
}

/**
 * The one error handler. Routes whose settings say "degrade" (verify) never answer 5xx: a fault there
 * is answered by `degrade`, the degraded challenge.
 */
export function errorHandler(degrade: (request: FastifyRequest) => Promise<unknown>) {
  return async function handle(err: unknown, request: FastifyRequest, reply: FastifyReply) {
    const settings = request.routeOptions.config?.warden as RouteSettings | undefined;
    const apiError = toApiError(err, request.body, settings, request.routeOptions.schema?.body);
    if (apiError.status >= 500) {
      request.log.error({ err }, "request failed");
      if (settings?.onStoreFault === "degrade") return reply.code(200).send(await degrade(request));
    }
    return reply.code(apiError.status).headers(apiError.headers).send(apiError.toBody());
  };
}

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send(errorBody("route_not_found"));
}
