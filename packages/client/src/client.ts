import type { JWTVerifyGetKey } from "jose";
import {
  isErrorBody,
  isRetryable,
  parseRetryAfter,
  type RetryClock,
  type RetryPolicy,
  realClock,
  SPEC_RETRY_POLICY,
  type TryOutcome,
  withRetries,
} from "./retry.js";
import { stableJson } from "./stableJson.js";
import { sha256Hex } from "./subject.js";
import type {
  Challenge,
  ChallengeRequest,
  FeedbackAck,
  FeedbackRequest,
  LedgerQuery,
  LedgerSummary,
  PageToken,
  PageTokenRequest,
  Verdict,
  VerifyRequest,
  WardenErrorBody,
} from "./types.js";
import { type TokenCheck, verifyVerdictToken } from "./verdictToken.js";

/** Why a verify produced no server verdict. */
export type LocalCause = "timeout" | "network" | "server_error" | "rate_limited" | "request_refused";

/**
 * The verdict the SDK gives when Warden gave none (transport failure, timeout, 5xx, exhausted 429,
 * or a refused request): the fail-closed answer of docs/api.md#degradation, a degraded challenge, never allow. It has no
 * eventId (no event exists) and no token; `local: true` tells it from the server's degraded verdict.
 */
export interface LocalVerdict {
  decision: "challenge";
  degraded: true;
  local: true;
  cause: LocalCause;
  /** The server's Error body when it answered one (e.g. 401 invalid_api_key). */
  error: WardenErrorBody | undefined;
  actorType: "unknown";
  confidence: 0;
  reasons: string[];
  eventId: undefined;
  verdictToken: undefined;
  enforcementMode: "enforce";
}

export type ServerVerdict = Verdict & { local: false };
export type VerifyResult = ServerVerdict | LocalVerdict;

/** An expected failure is a value: `ok: false` with the status and the Error body (docs/api.md#errors) when there was one. */
export type ApiResult<T> =
  | { ok: true; value: T; tries: number }
  | {
      ok: false;
      /** 0 when no HTTP answer came (network error or timeout). */
      status: number;
      error: WardenErrorBody | undefined;
      /** Whether the retry policy (docs/api.md#idempotency) would retry it (network, 429, 5xx Error body). */
      retryable: boolean;
      tries: number;
    };

export interface DeadLetter {
  feedback: FeedbackRequest;
  idempotencyKey: string;
  status: number;
  error: WardenErrorBody | undefined;
  tries: number;
}

export interface WardenClientOptions {
  /** Warden's base address, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  apiKey: string;
  /** Deadline of one verify try; default 250 ms (verify's 50 ms budget plus the network). */
  verifyTimeoutMs?: number;
  /** Deadline of one try of the other calls; default 5,000 ms. */
  timeoutMs?: number;
  /**
   * The retry policy (3 retries, Retry-After, full-jitter backoff from 1 s). Off by default: the
   * official SDKs do not retry automatically, so retrying is the integrator's choice. `true` takes the documented retry policy (docs/api.md#idempotency); an object adjusts it (never above 3 retries).
   */
  retry?: boolean | Partial<RetryPolicy>;
  /** Feedback the retries could not deliver (or a non-retryable refusal): keep it, alert on it. */
  onDeadLetter?: (letter: DeadLetter) => void | Promise<void>;
  fetch?: typeof fetch;
  clock?: RetryClock;
  /** Makes one Idempotency-Key per attempt; default crypto.randomUUID. */
  newIdempotencyKey?: () => string;
  /**
   * Your tenant id (`warden tenant create <id>`). The gates check that every verdictToken they act
   * on names it (`tid`): a gate refuses to start without it.
   */
  tenantId?: string;
  /** The verdictToken's `iss`: Warden's WARDEN_TOKEN_ISSUER; default `https://warden.local`. */
  tokenIssuer?: string;
  /** The verdictToken's `aud`: Warden's WARDEN_TOKEN_AUDIENCE; default `warden:verdict`. */
  tokenAudience?: string;
  /** Warden's published keys; default `${baseUrl}/.well-known/jwks.json` (fetched once, cached). */
  jwks?: string | URL | JWTVerifyGetKey;
  /**
   * The secret the gates sign challenge tickets with (at least 32 random characters, kept on your
   * server), when a gate is not given its own.
   */
  ticketSecret?: string;
}

/** The environment variables WardenClient.fromEnv reads, each for the option it names. */
export const CLIENT_ENV = Object.freeze({
  baseUrl: "WARDEN_URL",
  apiKey: "WARDEN_API_KEY",
  tenantId: "WARDEN_TENANT",
  ticketSecret: "WARDEN_TICKET_SECRET",
  tokenIssuer: "WARDEN_TOKEN_ISSUER",
  tokenAudience: "WARDEN_TOKEN_AUDIENCE",
  verifyTimeoutMs: "WARDEN_VERIFY_TIMEOUT_MS",
});
const REQUIRED_ENV = ["baseUrl", "apiKey", "tenantId", "ticketSecret"] as const;

/** What a verdict's receipt must say besides what the client is configured with. */
export interface ReceiptExpectations {
  /** The session the verify was made with (the token's `sub`). */
  session: string;
  /** The action the verify was made for (the token's `action`). */
  action: string;
  /** The decisions accepted; default ["allow"]. */
  decisions?: readonly ("allow" | "challenge" | "deny")[];
}

/** Warden's defaults for WARDEN_TOKEN_ISSUER and WARDEN_TOKEN_AUDIENCE (docs/configuration.md). */
export const DEFAULT_TOKEN_ISSUER = "https://warden.local";
export const DEFAULT_TOKEN_AUDIENCE = "warden:verdict";

export class WardenClient {
  readonly baseUrl: string;
  private readonly policy: RetryPolicy | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly clock: RetryClock;
  private readonly verifyTimeoutMs: number;
  private readonly timeoutMs: number;
  private readonly newKey: () => string;

  /**
   * A client configured from the environment (CLIENT_ENV): WARDEN_URL, WARDEN_API_KEY, WARDEN_TENANT
   * and WARDEN_TICKET_SECRET are required, WARDEN_TOKEN_ISSUER and WARDEN_TOKEN_AUDIENCE default to
   * Warden's own, WARDEN_VERIFY_TIMEOUT_MS to 250. A missing one throws, naming it, when the app starts. `options` adds the rest.
   */
  static fromEnv(
    env: Readonly<Record<string, string | undefined>> = globalThis.process?.env ?? {},
    options: Partial<WardenClientOptions> = {},
  ): WardenClient {
    const missing = REQUIRED_ENV.filter((name) => !env[CLIENT_ENV[name]]).map((name) => CLIENT_ENV[name]);
    if (missing.length > 0) throw new Error(`Warden's client needs ${missing.join(", ")} in the environment`);
    const read = (name: keyof typeof CLIENT_ENV) => env[CLIENT_ENV[name]] as string;
    const optional = (name: "tokenIssuer" | "tokenAudience") =>
      env[CLIENT_ENV[name]] ? { [name]: read(name) } : {};
    const timeout = Number(env[CLIENT_ENV.verifyTimeoutMs] ?? Number.NaN);
    if (env[CLIENT_ENV.verifyTimeoutMs] !== undefined && !(timeout > 0))
      throw new Error(`${CLIENT_ENV.verifyTimeoutMs} must be a number of milliseconds`);
    return new WardenClient({
      baseUrl: read("baseUrl"),
      apiKey: read("apiKey"),
      tenantId: read("tenantId"),
      ticketSecret: read("ticketSecret"),
      ...optional("tokenIssuer"),
      ...optional("tokenAudience"),
      ...(timeout > 0 ? { verifyTimeoutMs: timeout } : {}),
      ...options,
    });
  }

  constructor(private readonly options: WardenClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.policy =
      options.retry === true
        ? SPEC_RETRY_POLICY
        : options.retry
          ? {
              ...SPEC_RETRY_POLICY,
              ...options.retry,
              maxRetries: Math.min(options.retry.maxRetries ?? 3, SPEC_RETRY_POLICY.maxRetries),
            }
          : undefined;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.clock = options.clock ?? realClock;
    this.verifyTimeoutMs = options.verifyTimeoutMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.newKey = options.newIdempotencyKey ?? (() => globalThis.crypto.randomUUID());
  }

  /**
   * POST /v1/verify. Never throws and never answers allow without Warden: anything but a 200 verdict
   * becomes a LocalVerdict (degraded challenge). With retries on, only tries that produced no verdict
   * are retried, all with one Idempotency-Key, so a retry replays rather than re-decides.
   */
  async verify(request: VerifyRequest, opts: { idempotencyKey?: string } = {}): Promise<VerifyResult> {
    const key = opts.idempotencyKey ?? request.idempotencyKey ?? this.newKey();
    const { outcome } = await withRetries(
      () => this.send("POST", "/v1/verify", request, key, this.verifyTimeoutMs),
      this.policy,
      this.clock,
    );
    if (outcome.kind === "answer" && outcome.status === 200 && isVerdict(outcome.body)) {
      return { ...outcome.body, local: false };
    }
    return localVerdict(outcome);
  }

  /**
   * Checks a verdict's verdictToken against this client's configuration: the ES256 signature against
   * Warden's published keys, `iss`, `aud`, `exp`, `tid` (the client's tenantId), `sub` (the session),
   * `jti` (the verdict's eventId), the action and the decision. What a gate does before it lets a
   * request through; call it yourself when you call verify without a gate.
   */
  async checkVerdict(verdict: ServerVerdict, expect: ReceiptExpectations): Promise<TokenCheck> {
    const tenantId = this.options.tenantId;
    if (tenantId === undefined) return { ok: false, reason: "the WardenClient has no tenantId to check" };
    const check = await verifyVerdictToken(verdict.verdictToken, {
      jwks: this.options.jwks ?? `${this.baseUrl}/.well-known/jwks.json`,
      issuer: this.options.tokenIssuer ?? DEFAULT_TOKEN_ISSUER,
      audience: this.options.tokenAudience ?? DEFAULT_TOKEN_AUDIENCE,
      tenantId,
      subject: expect.session,
      decisions: expect.decisions ?? ["allow"],
      action: expect.action,
    });
    if (!check.ok) return check;
    if (check.claims.jti !== verdict.eventId)
      return { ok: false, reason: "jti does not name the verdict's eventId" };
    if (check.claims.decision !== verdict.decision)
      return { ok: false, reason: "the token's decision is not the verdict's" };
    return check;
  }

  /** Whether checkVerdict can run: the gates refuse to start without a tenantId. */
  get tenantId(): string | undefined {
    return this.options.tenantId;
  }

  /** The gates' ticket secret, when the client holds it. */
  get ticketSecret(): string | undefined {
    return this.options.ticketSecret;
  }

  /** POST /v1/page-tokens: a page token for a form's page as it loads ({ subject: { ipTrunc, userAgent } }). */
  pageToken(request: PageTokenRequest): Promise<ApiResult<PageToken>> {
    return this.call<PageToken>("POST", "/v1/page-tokens", request, undefined);
  }

  readonly challenge = {
    /** Issue mode: { eventId, session, prefer?, context? }. */
    issue: (request: Omit<ChallengeRequest, "challengeId" | "proof">): Promise<ApiResult<Challenge>> =>
      this.call<Challenge>("POST", "/v1/challenge", request, undefined),
    /**
     * Completion mode: { eventId, session, challengeId, proof }. Its Idempotency-Key is made from the
     * completion itself, so that a completion sent again (its answer lost, by a retry here or by the
     * page sending the same solve again) gets the answer of the one that cleared the challenge
     * instead of 409 challenge_already_solved.
     */
    complete: async (
      request: ChallengeRequest & { challengeId: string; proof: Record<string, unknown> },
      opts: { idempotencyKey?: string } = {},
    ): Promise<ApiResult<Challenge>> => {
      const key = opts.idempotencyKey ?? request.idempotencyKey ?? (await completionIdempotencyKey(request));
      return this.call<Challenge>("POST", "/v1/challenge", request, key);
    },
  };

  readonly feedback = {
    /**
     * POST /v1/feedback with one Idempotency-Key for all its tries. What cannot be delivered goes to
     * `onDeadLetter` (dead-letter and alert; never invent an eventId: docs/api.md#degradation).
     */
    send: async (
      request: FeedbackRequest,
      opts: { idempotencyKey?: string } = {},
    ): Promise<ApiResult<FeedbackAck>> => {
      const key = opts.idempotencyKey ?? request.idempotencyKey ?? this.newKey();
      const result = await this.call<FeedbackAck>("POST", "/v1/feedback", request, key);
      if (!result.ok && this.options.onDeadLetter) {
        await this.options.onDeadLetter({
          feedback: request,
          idempotencyKey: key,
          status: result.status,
          error: result.error,
          tries: result.tries,
        });
      }
      return result;
    },
  };

  readonly ledger = {
    summary: (query: LedgerQuery = {}): Promise<ApiResult<LedgerSummary>> => {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
      const qs = params.toString();
      return this.call<LedgerSummary>("GET", `/v1/ledger/summary${qs ? `?${qs}` : ""}`, undefined, undefined);
    },
  };

  private async call<T>(
    method: string,
    path: string,
    body: unknown,
    idempotencyKey: string | undefined,
  ): Promise<ApiResult<T>> {
    const { outcome, tries } = await withRetries(
      () => this.send(method, path, body, idempotencyKey, this.timeoutMs),
      this.policy,
      this.clock,
    );
    if (outcome.kind === "answer" && outcome.status === 200)
      return { ok: true, value: outcome.body as T, tries };
    return {
      ok: false,
      status: outcome.kind === "answer" ? outcome.status : 0,
      error: outcome.kind === "answer" && isErrorBody(outcome.body) ? outcome.body : undefined,
      retryable: isRetryable(outcome),
      tries,
    };
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    idempotencyKey: string | undefined,
    timeoutMs: number,
  ): Promise<TryOutcome> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
    try {
      const res = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text === "" ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return {
        kind: "answer",
        status: res.status,
        body: parsed,
        retryAfterSeconds: parseRetryAfter(res.headers.get("retry-after"), this.clock.now()),
      };
    } catch (error) {
      return { kind: "network", error };
    }
  }
}

function isVerdict(body: unknown): body is Verdict {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return (
    (b.decision === "allow" || b.decision === "challenge" || b.decision === "deny") &&
    typeof b.eventId === "string" &&
    typeof b.degraded === "boolean" &&
    typeof b.verdictToken === "string"
  );
}

function localVerdict(outcome: TryOutcome): LocalVerdict {
  let cause: LocalCause;
  let error: WardenErrorBody | undefined;
  if (outcome.kind === "network") {
    const name = (outcome.error as { name?: string } | undefined)?.name;
    cause = name === "TimeoutError" || name === "AbortError" ? "timeout" : "network";
  } else {
    error = isErrorBody(outcome.body) ? outcome.body : undefined;
    cause =
      outcome.status === 429
        ? "rate_limited"
        : outcome.status >= 500 || outcome.status === 200
          ? "server_error"
          : "request_refused";
  }
  const why: Record<LocalCause, string> = {
    timeout: "Warden did not answer in time",
    network: "Warden could not be reached",
    server_error: "Warden answered with a server error",
    rate_limited: "Warden rate-limited this integration",
    request_refused: `Warden refused the request${error ? ` (${error.code})` : ""}`,
  };
  return {
    decision: "challenge",
    degraded: true,
    local: true,
    cause,
    error,
    actorType: "unknown",
    confidence: 0,
    reasons: [`${why[cause]}: failing closed to a challenge (decided locally by the SDK).`],
    eventId: undefined,
    verdictToken: undefined,
    enforcementMode: "enforce",
  };
}

/** The Idempotency-Key of a challenge completion: the same completion always has the same key. */
export async function completionIdempotencyKey(request: ChallengeRequest): Promise<string> {
  const { challengeId, session, eventId, proof } = request;
  return `wc1-${await sha256Hex(stableJson({ challengeId, session, eventId, proof }))}`;
}
