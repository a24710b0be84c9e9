import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp } from "../testing/harness.js";

/**
 * Degraded is for the service's own faults only. Generated bodies go through the whole app (parser,
 * limits, validation, operation, store) on a healthy store: no answer is 5xx, every refusal has the
 * Error schema, and no verify answers the degraded challenge because of what it was sent. Bodies go 16
 * at a time, which can push a verify past its deadline (load, the service's own fault): each body
 * answered degraded is sent again afterwards, alone, up to three times, and only one that degrades
 * every time fails the test.
 *
 * Each run draws 3,000 bodies per endpoint from a new seed, printed at the start, so runs together
 * cover ever more inputs while each stays short; `WARDEN_FUZZ_SEED=<seed>` replays a run exactly, and
 * `npm run fuzz` sends 100,000 bodies per endpoint (`WARDEN_FUZZ_BODIES`).
 */

const BODIES_PER_ENDPOINT = Number(process.env.WARDEN_FUZZ_BODIES ?? 3_000);
const SEED = Number(process.env.WARDEN_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(
  `bodies.fuzz: seed ${SEED} (replay with WARDEN_FUZZ_SEED=${SEED}), ${BODIES_PER_ENDPOINT} bodies per endpoint`,
);
const IN_FLIGHT = 16;

let t: TestApp;
let key: string;
/** Real ids, so that some bodies reach the operations' deeper paths. */
const known = { events: [] as string[], challenges: [] as string[] };

beforeAll(async () => {
  t = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "100000000" } });
  await t.tenant("fuzz", { rawPii: true });
  key = (await t.key("fuzz")).apiKey;
  for (let i = 0; i < 4; i++) {
    const v = (
      await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(key),
        payload: { action: "signup", session: `s${i}`, subject: { userAgent: "curl/8.5.0" } },
      })
    ).json() as { eventId: string };
    known.events.push(v.eventId);
    const c = (
      await t.app.inject({
        method: "POST",
        url: "/v1/challenge",
        headers: bearer(key),
        payload: { eventId: v.eventId, session: `s${i}` },
      })
    ).json() as { challengeId: string };
    known.challenges.push(c.challengeId);
  }
});
afterAll(() => t.close());

const hostileString = fc.constantFrom(
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "\ufeff",
  "\u202e",
  "x".repeat(20_000),
  "__proto__",
  "constructor",
  "toString",
  "1e400",
  "-0",
  "' OR 1=1 --",
  "../../etc/passwd",
  "%00",
  "\\",
);
const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: hostileString },
);
const scalar = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(0, -1, 1e21, 1_000_001, Number.MAX_SAFE_INTEGER),
);
const anyValue = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(text, scalar, { maxKeys: 5 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);
/** A value for a field: mostly plausible ones, the rest anything. */
const field = (...plausible: fc.Arbitrary<unknown>[]) =>
  fc.oneof({ weight: 12, arbitrary: fc.oneof(...plausible) }, { weight: 1, arbitrary: anyValue });
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });

const headers = fc.oneof(
  fc.constant(CHROME_HEADERS as Record<string, unknown>),
  fc.dictionary(
    fc.constantFrom(
      "accept",
      "sec-ch-ua",
      "sec-ch-ua-platform",
      "user-agent",
      "signature",
      "signature-input",
      ":path",
      "bad name",
    ),
    text,
    {
      maxKeys: 6,
    },
  ),
  anyValue,
);
const subject = field(
  fc.record(
    {
      email: optional(field(fc.emailAddress(), text)),
      emailSha256: optional(field(fc.stringMatching(/^[0-9a-f]{64}$/), text)),
      ip: optional(
        field(fc.ipV4(), fc.ipV6(), fc.constantFrom("203.0.113.5/32", "::ffff:203.0.113.5/128"), text),
      ),
      ipTrunc: optional(
        field(
          fc.constantFrom("203.0.113.0/24", "5.9.0.0/24", "2001:db8::/48", "203.0.0.0/16", "2001:db8::/32"),
          text,
        ),
      ),
      userAgent: optional(field(fc.constantFrom(CHROME_UA, "curl/8.5.0", "python-requests/2.31"), text)),
      headers: optional(headers),
      // Repeated free text and hashes differing only in case: one attempt, one count.
      formData: optional(
        field(fc.dictionary(fc.constantFrom("a", "b", "c"), fc.constant("x".repeat(40))), anyValue),
      ),
      formDataHashed: optional(
        field(fc.array(fc.constantFrom("0123456789abcdef", "0123456789ABCDEF"), { maxLength: 4 }), anyValue),
      ),
      browserSignals: optional(
        field(
          fc.record(
            {
              webdriver: optional(fc.boolean()),
              mismatch: optional(
                fc.array(fc.constantFrom("platform", "webgl", "toString", "constructor", "__proto__"), {
                  maxLength: 4,
                }),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
    },
    { requiredKeys: [] },
  ),
);
const context = field(
  fc.record(
    {
      logOnly: optional(field(fc.boolean())),
      decisionCosts: optional(
        field(fc.record({ falseAllow: fc.double(), falseChallenge: fc.double(), falseDeny: fc.double() })),
      ),
      challengeId: optional(field(fc.constantFrom(...["chl_none"]), text)),
      riskTier: optional(field(fc.constantFrom("default", "elevated", "severe"), text)),
    },
    { requiredKeys: [] },
  ),
);
const session = field(fc.constantFrom("s0", "s1", "s2", "s3"), fc.string({ maxLength: 130 }));

const verifyBody = fc.record(
  {
    action: field(fc.constantFrom("signup", "api_key", "x"), text),
    subject,
    session,
    surface: field(text),
    idempotencyKey: field(fc.stringMatching(/^[a-z0-9]{1,8}$/)),
    context,
  },
  { requiredKeys: [] },
);
const challengeBody = fc.record(
  {
    eventId: field(fc.constantFrom(...(["evt_none"] as string[]))),
    session,
    prefer: field(fc.array(fc.constantFrom("proof_of_work", "payment_preauth", "email_otp", "x"))),
    challengeId: field(fc.constantFrom("chl_none")),
    proof: field(
      fc.record(
        {
          method: optional(field(fc.constantFrom("proof_of_work", "provider_setup_intent", "web_bot_auth"))),
          nonce: optional(text),
          setupIntentId: optional(text),
          headers: optional(headers),
        },
        { requiredKeys: [] },
      ),
    ),
    context,
  },
  { requiredKeys: [] },
);
const feedbackBody = fc.record(
  {
    eventId: field(fc.constantFrom("evt_none")),
    outcome: field(
      fc.constantFrom("credit_burn", "converted", "abuse_confirmed", "false_positive", "x"),
      text,
    ),
    value: field(fc.double({ min: -10, max: 2_000_000 }), fc.integer()),
    unit: field(fc.constantFrom("usd", "credits", "count"), text),
    source: field(fc.constantFrom("billing", "manual_review"), text),
    observedAt: field(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      text,
    ),
    idempotencyKey: field(fc.stringMatching(/^[a-z0-9]{1,8}$/)),
  },
  { requiredKeys: [] },
);

/** Damage done to the JSON text itself: what a structured generator cannot produce. */
const damage = fc.oneof(
  { weight: 24, arbitrary: fc.constant((s: string) => s) },
  { weight: 1, arbitrary: fc.nat().map((n) => (s: string) => s.slice(0, n % (s.length + 1))) },
  { weight: 1, arbitrary: fc.constant((s: string) => s.replace(/:"/, ':"\\ud800')) },
  { weight: 1, arbitrary: fc.constant((s: string) => s.replace(/:"/, ':"\\u0000')) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 30, max: 20_000 })
      .map((n) => (s: string) => s.replace(/^\{/, `{"deep":${"[".repeat(n)}${"]".repeat(n)},`)),
  },
  { weight: 1, arbitrary: fc.constant((s: string) => s.replace(/^\{/, '{"__proto__":{"x":1},')) },
  { weight: 1, arbitrary: fc.constant((s: string) => s.replace(/^\{/, '{"constructor":{"prototype":{}},')) },
  { weight: 1, arbitrary: fc.constant((s: string) => s.replace(/^\{/, '{"n":1e400,')) },
  // Inside what verify fingerprints (subject, context): the canonical JSON of an Idempotency-Key.
  {
    weight: 1,
    arbitrary: fc.constant((s: string) => s.replace(/"(subject|context|proof)":\{/, '"$1":{"n":-1e999,')),
  },
  { weight: 1, arbitrary: fc.constant((s: string) => `\ufeff${s}`) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: "binary", maxLength: 20 }).map((junk) => (s: string) => s + junk),
  },
);

/** Real ids replace the placeholders in a fifth of the bodies. */
function withKnownIds(text: string, i: number): string {
  if (i % 5 !== 0) return text;
  return text
    .replaceAll("evt_none", known.events[i % known.events.length] as string)
    .replaceAll("chl_none", known.challenges[i % known.challenges.length] as string);
}

interface Tally {
  sent: number;
  byStatus: Record<number, number>;
  /** Degraded under load, then not when sent alone. */
  degradedUnderLoad: number;
  failures: string[];
}

async function fuzz(url: string, body: fc.Arbitrary<Record<string, unknown>>, seed: number): Promise<Tally> {
  const arb = fc.tuple(
    fc.oneof({ weight: 9, arbitrary: body }, { weight: 1, arbitrary: fc.jsonValue() }),
    damage,
  );
  const tally: Tally = { sent: 0, byStatus: {}, degradedUnderLoad: 0, failures: [] };
  const degraded: { payload: string; i: number }[] = [];
  const send = (payload: string, i: number) =>
    t.app.inject({
      method: "POST",
      url,
      headers: { ...bearer(key), ...(i % 7 === 0 ? { "idempotency-key": `k${i % 50}` } : {}) },
      payload,
    });
  let next = 0;
  const worker = async (w: number) => {
    // One generator per worker, each with its own seed: reproducible.
    const samples = fc.sample(arb, { numRuns: Math.ceil(BODIES_PER_ENDPOINT / IN_FLIGHT), seed: seed + w });
    for (const [value, hurt] of samples) {
      const i = next++;
      if (i >= BODIES_PER_ENDPOINT) return;
      const payload = withKnownIds(hurt(JSON.stringify(value) ?? "null"), i);
      const res = await send(payload, i);
      tally.sent++;
      tally.byStatus[res.statusCode] = (tally.byStatus[res.statusCode] ?? 0) + 1;
      if (res.statusCode >= 500) {
        tally.failures.push(
          `seed ${SEED}: ${res.statusCode} ${res.body.slice(0, 200)} ← ${payload.slice(0, 300)}`,
        );
        continue;
      }
      const answer = res.json() as Record<string, unknown>;
      if (res.statusCode !== 200) {
        if (typeof answer.code !== "string" || typeof answer.error !== "string") {
          tally.failures.push(`not the Error schema: ${res.body.slice(0, 200)}`);
        }
        continue;
      }
      if (answer.degraded === true) degraded.push({ payload, i });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, (_, w) => worker(w)));
  for (const { payload, i } of degraded) {
    let stillDegraded = true;
    for (let attempt = 0; attempt < 3 && stillDegraded; attempt++) {
      const res = await send(payload, i);
      stillDegraded = res.statusCode === 200 && (res.json() as { degraded: boolean }).degraded;
    }
    if (stillDegraded) tally.failures.push(`degraded on a healthy store ← ${payload.slice(0, 300)}`);
    else tally.degradedUnderLoad++;
  }
  return tally;
}

function report(url: string, tally: Tally): void {
  console.log(
    `fuzz ${url}: ${tally.sent} bodies, by status ${JSON.stringify(tally.byStatus)}, ` +
      `degraded under load but not alone ${tally.degradedUnderLoad}`,
  );
}

describe(`${BODIES_PER_ENDPOINT} generated bodies per endpoint on a healthy store`, () => {
  it.each([
    ["/v1/verify", verifyBody, 1],
    ["/v1/challenge", challengeBody, 2],
    ["/v1/feedback", feedbackBody, 3],
  ] as const)(
    "%s: no 5xx, every refusal in the Error schema, no degraded verdict",
    async (url, body, seed) => {
      const tally = await fuzz(
        url,
        body as fc.Arbitrary<Record<string, unknown>>,
        (SEED + seed * 1_000_003) | 0,
      );
      report(url, tally);
      expect(tally.sent).toBe(BODIES_PER_ENDPOINT);
      expect(tally.failures.slice(0, 10)).toEqual([]);
      // The generator reached past validation (bodies the operation itself answered: accepted, or
      // refused for what they name, an unknown event or another session), and some were refused by it.
      const pastValidation = Object.entries(tally.byStatus)
        .filter(([status]) => !["400", "413", "415"].includes(status))
        .reduce((n, [, count]) => n + count, 0);
      expect(pastValidation, JSON.stringify(tally.byStatus)).toBeGreaterThan(0);
      expect(tally.byStatus[400] ?? 0).toBeGreaterThan(0);
    },
    900_000,
  );
});
