import { type Static, Type } from "@sinclair/typebox";
import { ACTOR_TYPES, DECISIONS, ENFORCEMENT_MODES } from "../../domain.js";
import { literalUnion } from "../../lib/literalUnion.js";
import { MAX_PAGE_TOKEN } from "../../tokens/pageToken.js";
import { REASON_CATEGORIES } from "./reasonCodes.js";
import { MAX_PROBE_ANSWER } from "./signals/layoutProbe.js";
import { SCOPE_FIELDS } from "./signals/scopeFields.js";
import { JA4_PATTERN } from "./signals/tlsFingerprint.js";
import { MAX_USER_AGENT } from "./signals/userAgent.js";

/**
 * The verify contract as JSON Schema. The route validates requests and serialises responses with
 * these, the handler is typed by them, and /openapi.json is generated from them.
 */

const HeaderValue = Type.Union([
  Type.String({ maxLength: 8192 }),
  Type.Array(Type.String({ maxLength: 8192 }), { maxItems: 16 }),
]);

/** RFC 9110 field names (tchar), or the request line as HTTP/2 pseudo-headers (`:path`). */
const HEADER_NAME = "^:?[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$";
export const MAX_SUBJECT_HEADERS = 64;

/** A count of page events (or milliseconds): a whole number, bounded so that no sum overflows. */
const Count = Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 }));

/** What @warden/browser's watchPage read of the browser it runs in (subject.page.environment). */
const PageEnvironmentSchema = Type.Object(
  {
    probe: Type.Optional(
      Type.Array(Type.Number({ minimum: -1e6, maximum: 1e6 }), {
        maxItems: MAX_PROBE_ANSWER,
        description:
          "The sizes the page measured of its token's layout probe (POST /v1/page-tokens with probe).",
      }),
    ),
    screen: Type.Optional(
      Type.String({ maxLength: 32, description: "screen.width x screen.height, e.g. 1920x1080." }),
    ),
    colorDepth: Type.Optional(Type.Integer({ minimum: 0, maximum: 64 })),
    pixelRatio: Type.Optional(Type.Number({ minimum: 0, maximum: 16 })),
    cores: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1024, description: "navigator.hardwareConcurrency" }),
    ),
    memory: Type.Optional(Type.Number({ minimum: 0, maximum: 1024, description: "navigator.deviceMemory" })),
    touchPoints: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 256, description: "navigator.maxTouchPoints" }),
    ),
    timezone: Type.Optional(Type.String({ maxLength: 64 })),
    languages: Type.Optional(
      Type.String({ maxLength: 256, description: "navigator.languages, comma-separated." }),
    ),
    platform: Type.Optional(Type.String({ maxLength: 64, description: "navigator.platform" })),
    renderer: Type.Optional(Type.String({ maxLength: 256, description: "WebGL's unmasked renderer." })),
    canvas: Type.Optional(
      Type.String({ pattern: "^[0-9a-f]{1,64}$", description: "A hash of a fixed drawing on a canvas." }),
    ),
    canvasNoise: Type.Optional(
      Type.Boolean({
        description: "The same drawing read back differently twice, or a known colour read back altered.",
      }),
    ),
  },
  {
    additionalProperties: true,
    description:
      "What the page read of its browser (@warden/browser watchPage): the layout probe's measurements and the environment counted across attempts. It can only add suspicion or group attempts: a page can lie.",
  },
);

export const Subject = Type.Object(
  {
    email: Type.Optional(
      Type.String({ maxLength: 320, description: "Raw address; needs the tenant's raw-PII opt-in." }),
    ),
    emailSha256: Type.Optional(
      Type.String({
        pattern: "^[0-9a-fA-F]{64}$",
        description: "Hex SHA-256 of the trimmed, lower-cased address (preferred over email).",
      }),
    ),
    ip: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "Raw IP: one address, no prefix; needs the tenant's raw-PII opt-in.",
      }),
    ),
    ipTrunc: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "Truncated network, e.g. 203.0.113.0/24 (preferred over ip): an address or a network of /24 or narrower (IPv4), /48 or narrower (IPv6); Warden truncates it to /24 or /48.",
      }),
    ),
    userAgent: Type.Optional(
      Type.String({
        maxLength: MAX_USER_AGENT,
        description: "At most 2,048 characters; a user-agent in headers has the same cap.",
      }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), HeaderValue, {
        maxProperties: MAX_SUBJECT_HEADERS,
        propertyNames: { type: "string", pattern: HEADER_NAME },
        description:
          "The end user's request headers, as received and in the order received: at most 64, names of 1 to 128 token characters (or :pseudo-headers), values up to 8,192 characters.",
      }),
    ),
    formData: Type.Optional(Type.Unknown()),
    formDataHashed: Type.Optional(Type.Unknown()),
    browserSignals: Type.Optional(
      Type.Object(
        {
          webdriver: Type.Optional(
            Type.Boolean({
              description: "navigator.webdriver as the page read it (@warden/browser collectSignals).",
            }),
          ),
          mismatch: Type.Optional(
            Type.Array(Type.String({ maxLength: 64 }), {
              maxItems: 16,
              description: `What a worker of the page read differently from the page itself: ${SCOPE_FIELDS.join(", ")} (other names are ignored).`,
            }),
          ),
          workerHeadless: Type.Optional(
            Type.Boolean({ description: "The page's worker reported a headless browser's user agent." }),
          ),
        },
        {
          additionalProperties: true,
          description:
            "What the page observed of its browser, forwarded by your server. It can only add suspicion: a page can lie, so a clean report proves nothing.",
        },
      ),
    ),
    page: Type.Optional(
      Type.Object(
        {
          token: Type.Optional(
            Type.String({
              maxLength: MAX_PAGE_TOKEN,
              description:
                "The page token the form's page obtained when it loaded (POST /v1/page-tokens through your server; @warden/browser watchPage).",
            }),
          ),
          behaviour: Type.Optional(
            Type.Object(
              {
                elapsedMs: Count,
                keys: Count,
                inserted: Count,
                pasted: Count,
                autofilled: Count,
                pointerMoves: Count,
                clicks: Count,
                touches: Count,
                untrusted: Count,
              },
              {
                additionalProperties: true,
                description:
                  "What the page counted between load and submit (@warden/browser watchPage): trusted key presses, text inserted without a key press, pastes, autofills, pointer moves and presses, touches, and script-dispatched events. Only counts that incriminate are read.",
              },
            ),
          ),
          environment: Type.Optional(PageEnvironmentSchema),
        },
        {
          additionalProperties: true,
          description:
            "Evidence that the form's page ran. With the tenant's requirePage, an attempt without it is a program that never ran the page.",
        },
      ),
    ),
    tls: Type.Optional(
      Type.Object(
        {
          ja4: Type.Optional(
            Type.String({
              pattern: JA4_PATTERN,
              description:
                "The client's JA4 TLS fingerprint as the edge that terminated its connection computed it (for example t13d1516h2_8daaf6152771_02713d6af862).",
            }),
          ),
        },
        {
          additionalProperties: true,
          description:
            "The client's TLS handshake, forwarded by your server from the edge that saw it (the SDK's ja4Header option). A program that copies a browser's headers still shakes hands with its own TLS library.",
        },
      ),
    ),
  },
  { additionalProperties: true },
);

export const VerifyContext = Type.Object(
  {
    logOnly: Type.Optional(
      Type.Boolean({ description: "Integration-side observation mode; never from client data." }),
    ),
    decisionCosts: Type.Optional(
      Type.Unknown({
        description:
          "{ falseAllow, falseChallenge, falseDeny }: relative weights, defaults 1, 1, 3; invalid fields fall back to defaults.",
      }),
    ),
    challengeId: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: true, description: "Arbitrary metadata; the members above are recognised." },
);

export const VerifyRequest = Type.Object(
  {
    action: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "signup, trial_activation, api_key, … (any string of 1 to 128 characters).",
    }),
    subject: Subject,
    session: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    surface: Type.Optional(Type.String({ maxLength: 512 })),
    idempotencyKey: Type.Optional(Type.String()),
    context: Type.Optional(VerifyContext),
  },
  { additionalProperties: true },
);
export type VerifyRequest = Static<typeof VerifyRequest>;

export const Principal = Type.Object({
  resolved: Type.Boolean(),
  operator: Type.String(),
  onBehalfOf: Type.String(),
  identityBasis: Type.Array(Type.String()),
});

export const Verdict = Type.Object({
  decision: literalUnion(DECISIONS),
  actorType: literalUnion(ACTOR_TYPES),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  reasons: Type.Array(Type.String(), { minItems: 1 }),
  reasonDetails: Type.Array(
    Type.Object({
      code: Type.String({
        description: "Stable code from the reason catalogue (docs/api.md, Reason codes).",
      }),
      message: Type.String({ description: "The same sentence as reasons[i]." }),
      category: literalUnion(REASON_CATEGORIES),
    }),
    {
      minItems: 1,
      description:
        "reasons in their additive object form (docs/api.md#reason-codes): entry i is reasons[i] with a stable code and a category to group by.",
    },
  ),
  principal: Principal,
  verdictToken: Type.String(),
  eventId: Type.String(),
  degraded: Type.Boolean(),
  enforcementMode: literalUnion(ENFORCEMENT_MODES),
  challengeCleared: Type.Optional(Type.Literal(true)),
});
export type Verdict = Static<typeof Verdict>;
