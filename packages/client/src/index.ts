export {
  type ApiResult,
  CLIENT_ENV,
  DEFAULT_TOKEN_AUDIENCE,
  DEFAULT_TOKEN_ISSUER,
  type DeadLetter,
  type LocalCause,
  type LocalVerdict,
  type ReceiptExpectations,
  type ServerVerdict,
  type VerifyResult,
  WardenClient,
  type WardenClientOptions,
} from "./client.js";
export {
  type ChallengeRequired,
  type ChallengeRouteOptions,
  challengeRoutes,
  type FetchBody,
  FORM_FIELDS,
  type GateAnswer,
  type GateOptions,
  type GateVerdict,
  type RefusalCode,
  RefusedBody,
  runFetchGate,
  runGate,
  UNAVAILABLE_RETRY_SECONDS,
  type VerdictSeen,
} from "./gates/core.js";
export { wardenChallengeRoutes, wardenGate } from "./gates/express.js";
export { registerWardenChallengeRoutes, wardenFastify, wardenPreHandler } from "./gates/fastify.js";
export { wardenChallengeRouteHandlers, wardenRoute } from "./gates/fetch.js";
export { wardenChallengeHandlers, wardenMiddleware } from "./gates/hono.js";
export {
  backoffMs,
  isRetryable,
  parseRetryAfter,
  type RetryClock,
  type RetryPolicy,
  SPEC_RETRY_POLICY,
  type TryOutcome,
  withRetries,
} from "./retry.js";
export {
  clientAddress,
  FORWARDED_HEADERS,
  type RequestView,
  type SubjectOptions,
  sha256Hex,
  subjectFromRequest,
  trimmedLowerCaseEmail,
  truncateAddress,
} from "./subject.js";
export { readTicket, signTicket, type TicketClaims } from "./ticket.js";
export type * from "./types.js";
export {
  remoteKeySet,
  type TokenCheck,
  type VerdictClaims,
  type VerdictTokenExpectations,
  verifyVerdictToken,
} from "./verdictToken.js";
