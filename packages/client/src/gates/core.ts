import type { ServerVerdict, WardenClient } from "../client.js";
import { type RequestView, subjectFromRequest, trimmedLowerCaseEmail } from "../subject.js";
import { readTicket, signTicket } from "../ticket.js";
import type { Challenge, VerifyRequest } from "../types.js";
import { browserSignalsOf, pageReportOf } from "./pageSignals.js";

/** A parsed request body as an object (anything else is gated like an empty body). */
export const bodyObject = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};

/** The form fields a re-submitted form carries after a solved challenge. */
export const FORM_FIELDS = Object.freeze({
  ticket: "wardenTicket",
  challengeId: "wardenChallengeId",
  signals: "wardenSignals",
  page: "wardenPage",
});

/** Seconds the page waits before trying again when Warden could not be asked at all. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

export interface GateOptions {
  client: WardenClient;
  /** The action gated, e.g. "signup". */
  action: string;
  /** Signs challenge tickets; at least 32 characters, kept on your server. */
  ticketSecret: string;
  /**
   * Reads the email from the parsed body (only its hash leaves your server). A value that is not a
   * string (an array or object in the body) is refused with 400 `invalid_email`, never scored as no
   * email; your handler should read the email the same way.
   */
  email?: (body: Record<string, unknown>) => unknown;
  /**
   * Send the address itself (subject.email) instead of its SHA-256, so that Warden's email-domain and
   * disposable-address rules apply. Only for a tenant that opted in to raw PII (`warden tenant create
   * --raw-pii`); otherwise every verify is refused with 403 raw_pii_not_enabled.
   */
  rawEmail?: boolean;
  /** What of the body to carry, signed, in the ticket and hand back after the challenge. */
  pending?: (body: Record<string, unknown>) => Record<string, unknown> | undefined;
  /** Proxies in front of the app (see subjectFromRequest). */
  trustedProxies?: readonly string[];
  /** The header a trusted proxy writes the client's JA4 TLS fingerprint in (see SubjectOptions). */
  ja4Header?: string;
  surface?: string;
  /** Observe only (the verdict is always allow); set in server code, never from client data. */
  logOnly?: boolean;
  /**
   * Called with every verdict the gate acts on, before it answers: log it, keep the eventId of a
   * challenged or denied attempt for support (the 428 and 403 bodies carry it as `reference`). Its
   * errors are swallowed (a failing log must not turn into an allow or a 500); it is not awaited.
   */
  onVerdict?: (seen: VerdictSeen) => void;
  ticketTtlSeconds?: number;
}

/** What `onVerdict` is told: the verdict's decision and why, and the attempt it belongs to. */
export interface VerdictSeen {
  action: string;
  /** The gate's session of the attempt (the same across its challenge and re-verify). */
  session: string;
  eventId: string;
  decision: "allow" | "challenge" | "deny";
  actorType: string;
  reasons: readonly string[];
  degraded: boolean;
  /** A re-verify whose solved challenge Warden honoured. */
  challengeCleared: boolean;
}

/** Body of the 428: what the page needs to start the challenge (or to try again later). */
export type ChallengeRequired =
  | {
      error: "challenge_required";
      code: "warden_challenge";
      ticket: string;
      degraded: boolean;
      /** The attempt's eventId, to quote to support. */
      reference: string;
      message: string;
    }
  | { error: "challenge_required"; code: "warden_unavailable"; retryAfterSeconds: number; message: string };

export interface GateVerdict {
  verdict: ServerVerdict;
  /** The session the verify was made with (the subject of its verdictToken). */
  session: string;
  /** The pending form carried by the ticket, on an allow after a challenge. */
  pending: Record<string, unknown> | undefined;
}

export type GateAnswer =
  | ({ kind: "allow" } & GateVerdict)
  | { kind: "challenge"; status: 428; body: ChallengeRequired; headers: Record<string, string> }
  | {
      kind: "deny";
      status: 403;
      body: { error: "forbidden"; code: "warden_denied"; reference: string; message: string };
      headers: Record<string, string>;
    }
  | {
      kind: "invalid";
      status: 400 | 415;
      body:
        | { error: "bad_request"; code: "invalid_email"; message: string }
        | { error: "unsupported_media_type"; code: "unsupported_media_type"; message: string };
      headers: Record<string, string>;
    };

/**
 * A body the gate could not read as an object (a text/plain or unparsed body, a JSON array or
 * string): refused, because the handler behind the gate may still read it its own way, and would then
 * act on what Warden never scored (a deny-listed email sent as text/plain was created).
 */
function unreadable(view: RequestView, parsed: unknown): GateAnswer | undefined {
  const length = Number(view.headers["content-length"] ?? 0);
  const hasBody = length > 0 || view.headers["transfer-encoding"] !== undefined;
  if (!hasBody || (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))) return undefined;
  return {
    kind: "invalid",
    status: 415,
    headers: {},
    body: {
      error: "unsupported_media_type",
      code: "unsupported_media_type",
      message: "Send the form as a JSON object (application/json) or as form data.",
    },
  };
}

const newSession = () => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(18));
  return `ws_${btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")}`;
};

/**
 * One gated request: verify (or, with a ticket and a challengeId, the re-verify of the same attempt),
 * then allow, 428 with a ticket, or 403. Fails closed: a verify Warden did not answer is a 428 that
 * asks the page to try again (there is no event to challenge); it never allows.
 */
export async function runGate(opts: GateOptions, view: RequestView, parsed: unknown): Promise<GateAnswer> {
  const refused = unreadable(view, parsed);
  if (refused) return refused;
  const body = bodyObject(parsed);
  const ticket = await readTicket(opts.ticketSecret, body[FORM_FIELDS.ticket]);
  const challengeId = body[FORM_FIELDS.challengeId];
  const resumed =
    ticket && ticket.action === opts.action && typeof challengeId === "string" ? ticket : undefined;
  const session = resumed?.session ?? newSession();
  const read: unknown = resumed ? undefined : opts.email?.(body);
  // Whatever the reader returns is what Warden scores: a value that is not a string (an array or an
  // object sent for `email`) would be scored as no email while your handler may still read one.
  if (read !== undefined && read !== null && typeof read !== "string") {
    return {
      kind: "invalid",
      status: 400,
      headers: {},
      body: { error: "bad_request", code: "invalid_email", message: "email must be a string." },
    };
  }
  const email = read ?? undefined;
  const subject = await subjectFromRequest(view, {
    email,
    ...(opts.trustedProxies ? { trustedProxies: opts.trustedProxies } : {}),
    ...(opts.ja4Header ? { ja4Header: opts.ja4Header } : {}),
  });
  if (opts.rawEmail && email !== undefined && email.trim() !== "") {
    delete subject.emailSha256;
    subject.email = trimmedLowerCaseEmail(email);
  }
  if (resumed?.emailSha256) subject.emailSha256 = resumed.emailSha256;
  if (resumed?.email) subject.email = resumed.email;
  const signals = browserSignalsOf(body[FORM_FIELDS.signals]);
  if (signals) subject.browserSignals = signals;
  const page = pageReportOf(body[FORM_FIELDS.page]);
  if (page) subject.page = page;
  const request: VerifyRequest = { action: opts.action, subject, session };
  if (opts.surface !== undefined) request.surface = opts.surface;
  const context: NonNullable<VerifyRequest["context"]> = {};
  if (opts.logOnly) context.logOnly = true;
  if (resumed) context.challengeId = challengeId as string;
  if (Object.keys(context).length > 0) request.context = context;

  const verdict = await opts.client.verify(request);
  if (verdict.local) {
    return {
      kind: "challenge",
      status: 428,
      headers: { "retry-after": String(UNAVAILABLE_RETRY_SECONDS) },
      body: {
        error: "challenge_required",
        code: "warden_unavailable",
        retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
        message: "This request could not be checked right now; try again in a few seconds.",
      },
    };
  }
  if (opts.onVerdict) {
    try {
      opts.onVerdict({
        action: opts.action,
        session,
        eventId: verdict.eventId,
        decision: verdict.decision,
        actorType: verdict.actorType,
        reasons: verdict.reasons,
        degraded: verdict.degraded,
        challengeCleared: verdict.challengeCleared === true,
      });
    } catch {
      // the hook's failure is the app's to log; the gate's answer stands
    }
  }
  if (verdict.decision === "allow") return { kind: "allow", verdict, session, pending: resumed?.pending };
  if (verdict.decision === "deny") {
    return {
      kind: "deny",
      status: 403,
      headers: {},
      body: {
        error: "forbidden",
        code: "warden_denied",
        reference: verdict.eventId,
        message: "This request was refused.",
      },
    };
  }
  const pending = resumed ? resumed.pending : opts.pending?.(body);
  const signed = await signTicket(
    opts.ticketSecret,
    {
      eventId: verdict.eventId,
      session,
      action: opts.action,
      ...(subject.emailSha256 ? { emailSha256: subject.emailSha256 } : {}),
      ...(subject.email ? { email: subject.email } : {}),
      ...(pending ? { pending } : {}),
    },
    opts.ticketTtlSeconds,
  );
  return {
    kind: "challenge",
    status: 428,
    headers: {},
    body: {
      error: "challenge_required",
      code: "warden_challenge",
      ticket: signed,
      degraded: verdict.degraded,
      reference: verdict.eventId,
      message: "Complete the challenge, then send the form again with its ticket and challengeId.",
    },
  };
}

export interface ChallengeRouteOptions {
  client: WardenClient;
  ticketSecret: string;
  /** Proxies in front of the app, as for the gate: the page token is bound to the client's network. */
  trustedProxies?: readonly string[];
  /** Methods to ask for, in order (the floor is proof_of_work). */
  prefer?: NonNullable<Parameters<WardenClient["challenge"]["issue"]>[0]["prefer"]>;
}

export interface RouteAnswer {
  status: number;
  body: unknown;
}

const invalidTicket: RouteAnswer = {
  status: 400,
  body: {
    error: "bad_request",
    code: "invalid_ticket",
    message: "The challenge ticket is missing, altered or expired.",
  },
};

/**
 * The two backend routes the browser element calls: issue and complete, each taking the ticket
 * instead of an eventId and session, so the browser never holds an API key nor picks the event.
 * Warden's refusals pass through with their status and code.
 */
export function challengeRoutes(opts: ChallengeRouteOptions) {
  const relay = (result: Awaited<ReturnType<WardenClient["challenge"]["issue"]>>): RouteAnswer =>
    result.ok
      ? { status: 200, body: result.value satisfies Challenge }
      : {
          status: result.status === 0 ? 503 : result.status,
          body: result.error ?? {
            error: "service_unavailable",
            code: "challenge_unavailable",
            message: "The challenge service could not be reached.",
          },
        };
  return {
    /**
     * A page token for the page that just loaded (@warden/browser's watchPage asks for it): Warden
     * binds it to this request's network and user agent; the form sends it back as `wardenPage`.
     */
    async page(view: RequestView): Promise<RouteAnswer> {
      const { ipTrunc, userAgent } = await subjectFromRequest(view, {
        ...(opts.trustedProxies ? { trustedProxies: opts.trustedProxies } : {}),
        headers: [],
      });
      const result = await opts.client.pageToken({
        subject: { ...(ipTrunc ? { ipTrunc } : {}), ...(userAgent ? { userAgent } : {}) },
      });
      return result.ok
        ? { status: 200, body: { pageToken: result.value.pageToken } }
        : {
            status: result.status === 0 ? 503 : result.status,
            body: result.error ?? {
              error: "service_unavailable",
              code: "page_token_unavailable",
              message: "The page token service could not be reached.",
            },
          };
    },
    async issue(body: Record<string, unknown>): Promise<RouteAnswer> {
      const ticket = await readTicket(opts.ticketSecret, body[FORM_FIELDS.ticket] ?? body.ticket);
      if (!ticket) return invalidTicket;
      return relay(
        await opts.client.challenge.issue({
          eventId: ticket.eventId,
          session: ticket.session,
          ...(opts.prefer ? { prefer: opts.prefer } : {}),
        }),
      );
    },
    async complete(body: Record<string, unknown>): Promise<RouteAnswer> {
      const ticket = await readTicket(opts.ticketSecret, body[FORM_FIELDS.ticket] ?? body.ticket);
      if (!ticket) return invalidTicket;
      const { challengeId, proof } = body;
      if (typeof challengeId !== "string" || typeof proof !== "object" || proof === null) {
        return {
          status: 400,
          body: {
            error: "bad_request",
            code: "missing_required_field",
            message: "challengeId and proof are required.",
          },
        };
      }
      return relay(
        await opts.client.challenge.complete({
          eventId: ticket.eventId,
          session: ticket.session,
          challengeId,
          proof: proof as Record<string, unknown>,
        }),
      );
    },
  };
}
