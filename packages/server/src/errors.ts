import { Type } from "@sinclair/typebox";

/**
 * The error catalogue: every error code the API can answer, with its HTTP status and default message.
 * The `error` label is derived from the status (docs/api.md#errors), so status and label never drift.
 * The README's error table is checked against this list by errors.test.ts.
 */
export const ERROR_CATALOGUE = {
  missing_required_field: { status: 400, message: "A required field is missing." },
  invalid_field: { status: 400, message: "A field has an invalid type or value." },
  invalid_json: { status: 400, message: "The request body is not valid JSON." },
  nesting_too_deep: { status: 400, message: "The JSON body nests objects and arrays deeper than 32 levels." },
  body_too_complex: {
    status: 400,
    message: "The JSON body has more than 1,000 items in one array or object, or 10,000 values in all.",
  },
  string_too_long: {
    status: 400,
    message: "A string in the body exceeds 16,384 characters, or a member name 256.",
  },
  invalid_string: {
    status: 400,
    message: "A string in the body holds a NUL character or a lone UTF-16 surrogate.",
  },
  invalid_number: {
    status: 400,
    message: "A number in the body is too large to represent (it overflows to Infinity).",
  },
  invalid_url: { status: 400, message: "The URL's path is not valid percent-encoded UTF-8." },
  malformed_request: { status: 400, message: "The HTTP request is malformed." },
  expectation_failed: {
    status: 417,
    message: "The request's Expect header asks for something other than 100-continue.",
  },
  invalid_idempotency_key: {
    status: 400,
    message: "The idempotency key must be 1 to 255 printable characters.",
  },
  invalid_api_key: { status: 401, message: "The API key is missing or invalid." },
  console_session_required: {
    status: 401,
    message: "The console session is missing, expired or signed out: sign in again.",
  },
  insufficient_scope: { status: 403, message: "The API key lacks the scope this operation needs." },
  forbidden_origin: {
    status: 403,
    message: "The console refuses this request from another site (Origin or console header missing).",
  },
  host_not_allowed: {
    status: 403,
    message:
      "The operator's surfaces answer only to an IP address, localhost, a one-label name or a name in WARDEN_ADMIN_HOSTS.",
  },
  raw_pii_not_enabled: {
    status: 403,
    message: "Raw email or IP needs the tenant's opt-in; send emailSha256 or ipTrunc instead.",
  },
  invalid_rule: {
    status: 400,
    message: "The deny rule's list or value is not one a console rule can add.",
  },
  policy_changed: {
    status: 409,
    message:
      "The tenant's policy changed since the version the rule was based on: look at the what-if again.",
  },
  invalid_outcome: { status: 400, message: "outcome is not one of the known outcome values." },
  invalid_value: { status: 400, message: "value must be a number from 0 to 1000000." },
  invalid_unit: { status: 400, message: "unit must be usd, credits or count." },
  unit_without_value: { status: 400, message: "unit needs a value." },
  invalid_source: {
    status: 400,
    message:
      "source must be billing, usage_metering, trust_queue, manual_review, customer_system or automated_detector.",
  },
  invalid_observed_at: {
    status: 400,
    message: "observedAt must be an ISO 8601 date-time with an offset, not in the future.",
  },
  invalid_query: { status: 400, message: "A query parameter is invalid." },
  invalid_resolution: { status: 400, message: "resolution must be accept or reject." },
  session_required: { status: 400, message: "session is required (the session the challenge is bound to)." },
  session_too_long: { status: 400, message: "session must be at most 128 characters." },
  invalid_risk_tier: { status: 400, message: "context.riskTier must be default, elevated or severe." },
  invalid_challenge_proof: {
    status: 400,
    message: "The proof does not solve this challenge; it stays issued.",
  },
  payment_not_succeeded: {
    status: 400,
    message: "The payment provider's result does not prove this challenge; it stays issued.",
  },
  challenge_method_mismatch: {
    status: 400,
    message: "The proof is for another method than the challenge's.",
  },
  event_denied: {
    status: 403,
    message: "The event's verdict was deny; a deny cannot be escaped through a challenge.",
  },
  event_not_challenged: {
    status: 403,
    message: "The event's verdict was not challenge; only a challenged attempt can be cleared.",
  },
  event_already_cleared: {
    status: 409,
    message:
      "A challenge of this event was already cleared and used by a re-verify: one clear per attempt. Verify the new attempt.",
  },
  event_without_session: {
    status: 400,
    message: "The event's verify carried no session, so no challenge can be bound to its attempt.",
  },
  challenge_session_mismatch: { status: 403, message: "The challenge is bound to another session." },
  unknown_challenge: { status: 404, message: "No such challenge for this tenant." },
  challenge_already_solved: { status: 409, message: "The challenge was already solved." },
  challenge_expired: { status: 410, message: "The challenge has expired; issue a fresh one." },
  forbidden_path: { status: 403, message: "This path may not be served." },
  route_not_found: { status: 404, message: "No such route." },
  unknown_event_id: { status: 404, message: "No event with this eventId for this tenant." },
  unknown_feedback_id: { status: 404, message: "No observation with this feedbackId for this tenant." },
  feedback_not_quarantined: {
    status: 409,
    message: "The observation is not quarantined; only a quarantined observation can be resolved.",
  },
  feedback_already_resolved: {
    status: 409,
    message: "The observation was already resolved the other way; a resolution is final.",
  },
  idempotency_conflict: {
    status: 409,
    message: "This idempotency key was used with a different payload; create a new key.",
  },
  request_timeout: { status: 408, message: "The request was not received in time." },
  precondition_failed: {
    status: 412,
    message: "A precondition header (If-Match, If-Unmodified-Since) failed.",
  },
  payload_too_large: { status: 413, message: "The request body exceeds the byte cap." },
  uri_too_long: { status: 414, message: "A path segment is longer than 100 characters." },
  unsupported_media_type: {
    status: 415,
    message: "Content-Type must be application/json when a body is sent.",
  },
  range_not_satisfiable: { status: 416, message: "The requested byte range is outside the file." },
  rate_limited: {
    status: 429,
    message: "Rate limit exceeded; retry after the number of seconds in Retry-After.",
  },
  headers_too_large: { status: 431, message: "The request's headers exceed the server's size limit." },
  internal_error: { status: 500, message: "An internal error occurred." },
  store_unavailable: { status: 503, message: "The store is unavailable; retry with backoff." },
  challenge_issue_failed: { status: 503, message: "The challenge could not be issued; retry with backoff." },
  challenge_unavailable: { status: 503, message: "The challenge could not be checked; retry with backoff." },
  payment_verification_unavailable: {
    status: 503,
    message: "The payment provider could not be reached to verify the proof; retry with backoff.",
  },
  page_token_unavailable: {
    status: 503,
    message: "A page token could not be issued (the API key could not be checked); retry with backoff.",
  },
  feedback_lookup_failed: {
    status: 503,
    message: "The ledger could not look up the event; retry with backoff.",
  },
  feedback_ingest_failed: {
    status: 503,
    message:
      "The ledger could not store the observation; nothing was stored; retry with the same Idempotency-Key.",
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Stable `error` label per HTTP status (docs/api.md#errors; Warden's own statuses get labels of the same kind). */
export const ERROR_LABELS: Readonly<Record<number, string>> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  408: "request_timeout",
  409: "conflict",
  410: "gone",
  412: "precondition_failed",
  413: "payload_too_large",
  414: "uri_too_long",
  415: "unsupported_media_type",
  416: "range_not_satisfiable",
  417: "expectation_failed",
  429: "too_many_requests",
  431: "headers_too_large",
  500: "internal_error",
  503: "service_unavailable",
};

/** The Error schema (docs/api.md#errors), for route response schemas and the OpenAPI document. */
export const ErrorResponse = Type.Object({
  error: Type.String({ description: "Stable label per HTTP status." }),
  message: Type.String({ description: "Human-readable; never handle on it." }),
  code: Type.String({ description: "Machine discriminator; handle on this." }),
});

export interface ErrorBody {
  error: string;
  message: string;
  code: ErrorCode;
}

/** An expected failure with a stable code; routes throw it and the error handler renders it. */
export class ApiError extends Error {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(message ?? ERROR_CATALOGUE[code].message);
    this.name = "ApiError";
    this.status = ERROR_CATALOGUE[code].status;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return errorBody(this.code, this.message);
  }
}

export function errorBody(code: ErrorCode, message?: string): ErrorBody {
  const { status, message: fallback } = ERROR_CATALOGUE[code];
  return { error: ERROR_LABELS[status] ?? "error", message: message ?? fallback, code };
}
