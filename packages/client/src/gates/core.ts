import type { ServerVerdict, WardenClient } from "../client.js";
import { type RequestView, subjectFromRequest, trimmedLowerCaseEmail } from "../subject.js";
import { formDigest, readTicket, signTicket } from "../ticket.js";
import type { Challenge, VerifyRequest } from "../types.js";
import type { VerdictClaims } from "../verdictToken.js";
import {
  challengePage,
  type HtmlPages,
  isFormNavigation,
  refusedPage,
  unavailablePage,
} from "./htmlAnswers.js";
import { browserSignalsOf, pageReportOf } from "./pageSignals.js";

/** A body as a parser makes it: a plain object (JSON or form data), not a Buffer, array or string. */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** A parsed request body as an object (anything else is read like an empty body). */
export const bodyObject = (value: unknown): Record<string, unknown> => (isPlainObject(value) ? value : {});

/** The form fields a re-submitted form carries after a solved challenge. */
export const FORM_FIELDS = Object.freeze({
  ticket: "wardenTicket",
  challengeId: "wardenChallengeId",
  signals: "wardenSignals",
  page: "wardenPage",
});
const GATE_FIELDS: ReadonlySet<string> = new Set(Object.values(FORM_FIELDS));

/** The form the person filled in: the body without the gate's own fields. */
const formOf = (body: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(body).filter(([name]) => !GATE_FIELDS.has(name)));

/** Seconds the page waits before trying again when Warden could not be asked at all. */
export const UNAVAILABLE_RETRY_SECONDS = 5;

export interface GateOptions {
  client: WardenClient;
  /** The action gated, e.g. "signup". */
  action: string;
  /** Signs challenge tickets; at least 32 characters, kept on your server. Default: the client's. */
  ticketSecret?: string;
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
   * Called with every verdict the gate acts on, and awaited, before it answers: log it, keep the
   * eventId of a challenged or denied attempt for support (the 428 and 403 bodies carry it as
   * `reference`). If it throws or rejects, the request fails closed through the framework's error
   * path (Express next(err), Fastify's and Hono's error handlers, a rejected fetch handler): a 500,
   * never an allow.
   */
  onVerdict?: (seen: VerdictSeen) => void | Promise<void>;
  ticketTtlSeconds?: number;
  /**
   * Where your pages load @warden/browser's `warden.js` (default `/warden/warden.js`): the page the
   * gate answers a plain HTML form post with, on a challenge, loads the widget from there.
   */
  scriptSrc?: string;
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
  /**
   * Set when Warden allowed the attempt but its verdictToken did not check out (the reason, e.g.
   * "tid does not name your tenant"): the gate refused the request with 403 receipt_invalid. A
   * wrong tenantId, issuer or audience in the client's configuration shows here first.
   */
  receiptInvalid?: string;
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

/**
 * What a gated handler receives on an allow: the verdict, its receipt already checked by the gate
 * (signature, iss, aud, exp, tid, sub, jti, action and decision, from the client's configuration),
 * and the form to act on.
 */
export interface GateVerdict {
  verdict: ServerVerdict;
  /** The verdict's eventId: store it on what you create, it is the join key for feedback. */
  eventId: string;
  /** The session the verify was made with (the subject of its verdictToken). */
  session: string;
  /** The verdictToken's claims, checked. */
  receipt: VerdictClaims;
  /**
   * `enforce`: Warden allowed this attempt. `log_only`: Warden only observed it (the gate's
   * `logOnly`, or the tenant or key set to observe): nothing was checked against its risk, so it
   * goes on as it would without Warden.
   */
  enforcementMode: "enforce" | "log_only";
  /** A re-verify whose solved challenge Warden honoured. */
  challengeCleared: boolean;
  /**
   * The form to act on: the verified body without the gate's own `warden*` fields (after a clear,
   * the very form the ticket was issued for, by its digest); for a re-submission of the gate's
   * fields alone, the `pending` form the ticket carried.
   */
  form: Record<string, unknown>;
  /** The pending form carried by the ticket, on an allow after a challenge. */
  pending: Record<string, unknown> | undefined;
  /**
   * The body the gate verified, as parsed (the gate's `warden*` fields included): Express's
   * req.body and Fastify's request.body are this very object; the fetch gate's request body is spent.
   */
  body: Record<string, unknown>;
}

/**
 * A gate checks every allow's verdictToken against the client's tenantId: without one it could
 * check nothing, so it refuses to start (a configuration error, at start-up, not on a request); so
 * does a gate with no ticket secret to sign its challenges with.
 */
export function requireTenant(opts: { client: WardenClient; ticketSecret?: string }): void {
  if (!opts.client.tenantId)
    throw new Error(
      "A Warden gate checks each verdictToken against your tenant: give the WardenClient your tenantId (new WardenClient({ baseUrl, apiKey, tenantId }))",
    );
  secretOf(opts);
}

/** The secret that signs the gate's tickets: the gate's own, or the client's. */
export function secretOf(opts: { client: WardenClient; ticketSecret?: string }): string {
  const secret = opts.ticketSecret ?? opts.client.ticketSecret;
  if (secret === undefined || secret.length < 32)
    throw new Error("A Warden gate signs challenge tickets with a ticketSecret of at least 32 characters");
  return secret;
}

/**
 * Why a gate refuses a request before any verify: one list of codes, each with its status and message
 * (the message is the client's to read; it names no field value).
 */
const REFUSALS = {
  invalid_email: [400, "bad_request", "email must be a string."],
  invalid_body: [400, "bad_request", "The body does not parse as its Content-Type says."],
  duplicate_field: [400, "bad_request", "A field is sent more than once; send each field once."],
  unsupported_media_type: [
    415,
    "unsupported_media_type",
    "Send the form as JSON (application/json) or form data (application/x-www-form-urlencoded, multipart/form-data).",
  ],
} as const;
export type RefusalCode = keyof typeof REFUSALS;
type Refusal = {
  kind: "invalid";
  status: 400 | 415;
  body: { error: "bad_request" | "unsupported_media_type"; code: RefusalCode; message: string };
  headers: Record<string, string>;
};
const refusal = (code: RefusalCode): Refusal => {
  const [status, error, message] = REFUSALS[code];
  return { kind: "invalid", status, headers: {}, body: { error, code, message } };
};

/**
 * What a gate answers. A refusal after a verify carries `html` too when the request was a plain HTML
 * form post (a page navigation): the page to answer instead of the JSON body (htmlAnswers.ts).
 */
export type GateAnswer =
  | { kind: "allow"; warden: GateVerdict }
  | {
      kind: "challenge";
      status: 428;
      body: ChallengeRequired;
      headers: Record<string, string>;
      html?: string;
    }
  | {
      kind: "deny";
      status: 403;
      body: {
        error: "forbidden";
        code: "warden_denied" | "receipt_invalid";
        reference: string;
        message: string;
      };
      headers: Record<string, string>;
      html?: string;
    }
  | Refusal;

/** The headers of an HTML answer: a page holding the person's form is never stored. */
export const HTML_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
});

/**
 * A form body a framework's parser could not hand over as verified (a field sent twice, a body that
 * does not parse): the parser leaves this in place of the body, and the gate answers its refusal.
 */
export class RefusedBody {
  constructor(readonly refusal: Refusal) {}
}

/**
 * The body a gate verifies, which must be the very one its handler reads: a plain object as the
 * framework's parser made it, or nothing when no body came. Anything else (a string from a text
 * parser, a Buffer, a JSON array, a body no parser took) is refused with 415: the handler could still
 * read it its own way, and act on what Warden never scored.
 */
function verifiedBody(view: RequestView, parsed: unknown): Record<string, unknown> | undefined {
  if (isPlainObject(parsed)) return parsed;
  const length = Number(view.headers["content-length"] ?? 0);
  const sent = length > 0 || view.headers["transfer-encoding"] !== undefined;
  return parsed == null && !sent ? {} : undefined;
}

/** The body readers of a fetch-API Request, or of Hono's c.req (which caches what they read). */
export interface FetchBody {
  text(): Promise<string>;
  formData(): Promise<FormData>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * A fetch-API body, read once by its media type with the parser its handler's readers use, so that
 * they read what was verified: JSON with JSON.parse (Hono's c.req.json() parses the same text again);
 * form data with the platform's FormData, which Hono's parseBody() and formData() then return. A
 * form field sent twice is refused, since readers disagree on which value is the field
 * (FormData.get() takes the first, parseBody() the last). Any other media type must come without a
 * body.
 */
export async function readFetchBody(
  type: string | null | undefined,
  body: FetchBody,
): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; refused: Refusal }> {
  const refuse = (code: RefusalCode) => ({ ok: false, refused: refusal(code) }) as const;
  const media = type?.split(";")[0]?.trim().toLowerCase();
  if (media === "application/json") {
    const text = await body.text();
    if (text === "") return { ok: true, body: {} };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return refuse("invalid_body");
    }
    return isPlainObject(parsed) ? { ok: true, body: parsed } : refuse("unsupported_media_type");
  }
  if (media === "application/x-www-form-urlencoded" || media === "multipart/form-data") {
    let form: FormData;
    try {
      form = await body.formData();
    } catch {
      return refuse("invalid_body");
    }
    const fields: Record<string, unknown> = Object.create(null);
    let repeated = false;
    form.forEach((value, name) => {
      repeated ||= Object.hasOwn(fields, name);
      fields[name] = value;
    });
    return repeated ? refuse("duplicate_field") : { ok: true, body: fields };
  }
  return (await body.arrayBuffer()).byteLength === 0
    ? { ok: true, body: {} }
    : refuse("unsupported_media_type");
}

/** runGate for a fetch-API request (Hono, the fetch gate): the gate reads the body itself. */
export async function runFetchGate(
  opts: GateOptions,
  view: RequestView,
  body: FetchBody,
): Promise<GateAnswer> {
  const type = view.headers["content-type"];
  const read = await readFetchBody(typeof type === "string" ? type : undefined, body);
  return read.ok ? runGate(opts, view, read.body) : read.refused;
}

/** What a page of the gate posts back: the form, and the page's evidence as the form's text. */
function postedBack(body: Record<string, unknown>, form: Record<string, unknown>): Record<string, unknown> {
  const evidence: Record<string, unknown> = {};
  for (const name of [FORM_FIELDS.page, FORM_FIELDS.signals]) {
    const value = body[name];
    if (value !== undefined) evidence[name] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return { ...form, ...evidence };
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
 * asks the page to try again (there is no event to challenge); it never allows. `parsed` is the body
 * as the framework's parser made it, the very object the handler will read.
 */
export async function runGate(opts: GateOptions, view: RequestView, parsed: unknown): Promise<GateAnswer> {
  if (parsed instanceof RefusedBody) return parsed.refusal;
  const body = verifiedBody(view, parsed);
  if (!body) return refusal("unsupported_media_type");
  const form = formOf(body);
  const secret = secretOf(opts);
  const digest = await formDigest(secret, form);
  const ticket = await readTicket(secret, body[FORM_FIELDS.ticket]);
  const challengeId = body[FORM_FIELDS.challengeId];
  // A clear resumes the form its ticket was issued for, or a re-submission of the gate's fields alone
  // (whose handler reads the ticket's `pending`). Any other form is a fresh attempt, scored on its
  // own: the challenge a clean address met must not clear a deny-listed one sent in its place.
  const resumed =
    ticket &&
    ticket.action === opts.action &&
    typeof challengeId === "string" &&
    (ticket.form === digest || Object.keys(form).length === 0)
      ? ticket
      : undefined;
  const session = resumed?.session ?? newSession();
  const read: unknown = resumed ? undefined : opts.email?.(body);
  // Whatever the reader returns is what Warden scores: a value that is not a string (an array or an
  // object sent for `email`) would be scored as no email while your handler may still read one.
  if (read !== undefined && read !== null && typeof read !== "string") return refusal("invalid_email");
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

  const pages: HtmlPages | undefined = isFormNavigation(view)
    ? { scriptSrc: opts.scriptSrc ?? "/warden/warden.js", action: view.url, form: postedBack(body, form) }
    : undefined;
  const verdict = await opts.client.verify(request);
  if (verdict.local) {
    return {
      kind: "challenge",
      status: 428,
      headers: { "retry-after": String(UNAVAILABLE_RETRY_SECONDS) },
      ...(pages ? { html: unavailablePage(pages) } : {}),
      body: {
        error: "challenge_required",
        code: "warden_unavailable",
        retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
        message: "This request could not be checked right now; try again in a few seconds.",
      },
    };
  }
  // An allow goes on only with its receipt: signed by Warden's key for this tenant, this session,
  // this action and this very verdict (docs/api.md#verdicttoken).
  const receipt =
    verdict.decision === "allow"
      ? await opts.client.checkVerdict(verdict, { session, action: opts.action })
      : undefined;
  // Awaited and not caught: a hook that fails fails the request through the framework's error path.
  await opts.onVerdict?.({
    action: opts.action,
    session,
    eventId: verdict.eventId,
    decision: verdict.decision,
    actorType: verdict.actorType,
    reasons: verdict.reasons,
    degraded: verdict.degraded,
    challengeCleared: verdict.challengeCleared === true,
    ...(receipt && !receipt.ok ? { receiptInvalid: receipt.reason } : {}),
  });
  if (receipt?.ok) {
    const pending = resumed?.pending;
    return {
      kind: "allow",
      warden: {
        verdict,
        eventId: verdict.eventId,
        session,
        receipt: receipt.claims,
        enforcementMode: verdict.enforcementMode,
        challengeCleared: verdict.challengeCleared === true,
        // A re-submission of the gate's fields alone acts on what the ticket carried.
        form: Object.keys(form).length === 0 && pending ? pending : form,
        pending,
        body,
      },
    };
  }
  if (verdict.decision !== "challenge") {
    const refused = receipt !== undefined;
    return {
      kind: "deny",
      status: 403,
      headers: {},
      body: {
        error: "forbidden",
        code: refused ? "receipt_invalid" : "warden_denied",
        reference: verdict.eventId,
        message: refused
          ? "Warden's answer could not be checked, so nothing was done."
          : "This request was refused.",
      },
      ...(pages ? { html: refusedPage(verdict.eventId) } : {}),
    };
  }
  const pending = resumed ? resumed.pending : opts.pending?.(body);
  const ticketed = resumed ? resumed.form : digest;
  const signed = await signTicket(
    secret,
    {
      eventId: verdict.eventId,
      session,
      action: opts.action,
      ...(subject.emailSha256 ? { emailSha256: subject.emailSha256 } : {}),
      ...(subject.email ? { email: subject.email } : {}),
      ...(pending ? { pending } : {}),
      ...(ticketed ? { form: ticketed } : {}),
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
    ...(pages ? { html: challengePage(signed, pages) } : {}),
  };
}

export interface ChallengeRouteOptions {
  client: WardenClient;
  /** Default: the client's (WardenClientOptions.ticketSecret). */
  ticketSecret?: string;
  /** Proxies in front of the app, as for the gate: the page token is bound to the client's network. */
  trustedProxies?: readonly string[];
  /** Methods to ask for, in order (the floor is proof_of_work). */
  prefer?: NonNullable<Parameters<WardenClient["challenge"]["issue"]>[0]["prefer"]>;
  /**
   * Hand the page the proof of work its challenge would be sealed with, for watchPage to solve while
   * the person fills the form in (default true): a challenge after the submit then clears at once.
   */
  precompute?: boolean;
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
  const secret = secretOf(opts);
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
     * binds it to this request's network and user agent and hands the page a layout probe to
     * measure, which the form sends back with the token as `wardenPage`, and (unless `precompute` is
     * false) the proof of work a challenge on the attempt would be sealed with, which the page solves
     * in the background.
     */
    async page(view: RequestView): Promise<RouteAnswer> {
      const { ipTrunc, userAgent } = await subjectFromRequest(view, {
        ...(opts.trustedProxies ? { trustedProxies: opts.trustedProxies } : {}),
        headers: [],
      });
      // With the layout probe: the form must then carry its measurements, which only a page laid out
      // by a browser engine has (verify's page_engine_absent otherwise).
      const result = await opts.client.pageToken({
        subject: { ...(ipTrunc ? { ipTrunc } : {}), ...(userAgent ? { userAgent } : {}) },
        probe: true,
        ...(opts.precompute === false ? {} : { pow: true }),
      });
      return result.ok
        ? {
            status: 200,
            body: {
              pageToken: result.value.pageToken,
              ...(result.value.probe ? { probe: result.value.probe } : {}),
              ...(result.value.pow ? { pow: result.value.pow } : {}),
            },
          }
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
      const ticket = await readTicket(secret, body[FORM_FIELDS.ticket] ?? body.ticket);
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
      const ticket = await readTicket(secret, body[FORM_FIELDS.ticket] ?? body.ticket);
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
