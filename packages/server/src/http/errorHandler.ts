import { type IncomingMessage, STATUS_CODES as REASON_PHRASES, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, ERROR_CATALOGUE, type ErrorCode, errorBody } from "../errors.js";
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
const FASTIFY_CODES: ReadonlyMap<string, ErrorCode> = new Map([
  ["FST_ERR_CTP_INVALID_MEDIA_TYPE", "unsupported_media_type"],
  ["FST_ERR_CTP_BODY_TOO_LARGE", "payload_too_large"],
  ["FST_ERR_CTP_EMPTY_JSON_BODY", "missing_required_field"],
  ["FST_ERR_CTP_INVALID_JSON_BODY", "invalid_json"],
  ["FST_ERR_CTP_INVALID_CONTENT_LENGTH", "invalid_json"],
  ["FST_ERR_CTP_INVALID_TYPE", "unsupported_media_type"],
  // The router's (frameworkErrors): a path that does not percent-decode, a parameter over 100 characters.
  ["FST_ERR_BAD_URL", "invalid_url"],
  ["FST_ERR_MAX_PARAM_LENGTH", "uri_too_long"],
]);

/**
 * Any other 4xx a framework part or plugin answers (the console's static files: a traversal or
 * dotfile is 403, a bad Range 416), by status; a 4xx not listed is a malformed request.
 */
const STATUS_CODES: ReadonlyMap<number, ErrorCode> = new Map([
  [400, "malformed_request"],
  [403, "forbidden_path"],
  [404, "route_not_found"],
  [408, "request_timeout"],
  [412, "precondition_failed"],
  [413, "payload_too_large"],
  [414, "uri_too_long"],
  [415, "unsupported_media_type"],
  [416, "range_not_satisfiable"],
  [431, "headers_too_large"],
]);

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
  // Own members only: a field named after an Object.prototype member must not find one.
  const code = Object.hasOwn(fieldCodes, field) ? fieldCodes[field] : undefined;
  return new ApiError(code ?? "invalid_field", `${field} ${issue.message ?? "is invalid"}.`);
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
  const mapped = fe.code ? FASTIFY_CODES.get(fe.code) : undefined;
  if (mapped) return new ApiError(mapped);
  if (err instanceof SyntaxError) return new ApiError("invalid_json");
  const status = fe.statusCode ?? (err as { status?: unknown }).status;
  if (typeof status === "number" && status >= 400 && status < 500) {
    const range = (err as { headers?: Record<string, unknown> }).headers?.["Content-Range"];
    // RFC 9110 §15.5.17: a 416 says the file's length in Content-Range.
    return new ApiError(
      STATUS_CODES.get(status) ?? "malformed_request",
      undefined,
      typeof range === "string" ? { "content-range": range } : {},
    );
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

/**
 * Fastify's `frameworkErrors`: the router's failures before any route runs (a path that does not
 * percent-decode, a parameter over 100 characters), answered in the Error schema like the rest.
 */
export function frameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(err, undefined);
  void reply.code(apiError.status).headers(apiError.headers).send(apiError.toBody());
}

/**
 * Node's `checkExpectation` event: an `Expect` header other than `100-continue` (which Node answers
 * itself). RFC 9110 §10.1.1 makes it 417; Node's own answer has no body, this one the Error schema.
 */
export function expectationFailed(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify(errorBody("expectation_failed"));
  response.writeHead(417, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  response.end(body);
}

/** Node's parser errors (llhttp codes) with a status of their own; any other is a malformed request. */
const PARSER_CODES: ReadonlyMap<string, ErrorCode> = new Map([
  ["ERR_HTTP_REQUEST_TIMEOUT", "request_timeout"],
  ["HPE_HEADER_OVERFLOW", "headers_too_large"],
  ["HPE_CHUNK_EXTENSIONS_OVERFLOW", "payload_too_large"],
]);

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request before Fastify saw it (a
 * Content-Length that is not a number or contradicts Transfer-Encoding, a malformed header line,
 * headers over Node's size limit, a client too slow). Answered on the socket in the Error schema,
 * then the connection is closed, as Node's own handler does.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const code = PARSER_CODES.get(err.code ?? "") ?? "malformed_request";
  const { status } = ERROR_CATALOGUE[code];
  const body = JSON.stringify(errorBody(code));
  // A response already under way on this connection cannot be followed by another.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    socket.write(
      `HTTP/1.1 ${status} ${REASON_PHRASES[status]}\r\nConnection: close\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
