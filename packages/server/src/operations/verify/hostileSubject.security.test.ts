import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerAgent } from "../../testing/agents.js";
import {
  bearer,
  CHROME_HEADERS,
  CHROME_UA,
  expectError,
  makeTestApp,
  type TestApp,
  windowStartClock,
} from "../../testing/harness.js";
import { signRequest } from "../../webBotAuth/signRequest.js";

/**
 * Subjects shaped to break verify: each is refused with a 400 naming its field, or scored as any
 * other request. Never the degraded answer (that is for the store's faults), never a way around the
 * rate limit or the tenant's lists.
 */

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme", { rawPii: true });
  key = (await t.key("acme")).apiKey;
  await t.store.policies.put(
    "acme",
    JSON.stringify({
      deny: { networks: ["203.0.113.0/24", "2001:db8:1::/48"] },
      velocity: { form_value: { perHour: 2 } },
    }),
    Date.now(),
  );
});
afterAll(() => t.close());

interface Answer {
  statusCode: number;
  json(): Record<string, unknown>;
}
const verify = (payload: unknown, app: TestApp = t, apiKey = key, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: { ...bearer(apiKey), ...headers },
    payload: payload as object,
  }) as Promise<Answer>;

/** Scored as any other request: 200, not degraded. */
async function scored(payload: unknown, headers: Record<string, string> = {}) {
  const res = await verify(payload, t, key, headers);
  expect(res.statusCode).toBe(200);
  const v = res.json() as { decision: string; degraded: boolean; reasons: string[]; actorType: string };
  expect(v.degraded).toBe(false);
  return v;
}

const text40 = "x".repeat(40);

describe("repeated form text is one attempt: scored, and counted once", () => {
  it.each([
    [
      "formDataHashed entries differing only in case",
      { formDataHashed: ["0123456789abcdef", "0123456789ABCDEF"] },
    ],
    ["two formData values of the same free text", { formData: { a: text40, b: text40 } }],
    ["free text that normalises to the same", { formData: [`  ${text40} `, text40.toUpperCase()] }],
  ])("%s → a scored verdict, the same as with the text once", async (what, form) => {
    const once = await scored({
      action: `once: ${what}`,
      session: "s2",
      subject: { userAgent: "curl/8.5.0", formDataHashed: ["0123456789abcdef"] },
    });
    const v = await scored({
      action: `twice: ${what}`,
      session: "s2",
      subject: { userAgent: "curl/8.5.0", ...form },
    });
    expect(v.decision).toBe(once.decision);
    expect(v.actorType).toBe(once.actorType);
  });

  it("a text repeated inside each request counts one attempt per request (the limit of 2 is passed on the third)", async () => {
    const body = (i: number) => ({
      action: "repeat-velocity",
      session: `rv${i}`,
      subject: {
        userAgent: CHROME_UA,
        headers: CHROME_HEADERS,
        formData: { a: "y".repeat(45), b: "Y".repeat(45) },
      },
    });
    const velocity = (r: { reasons: string[] }) => r.reasons.some((x) => x.startsWith("The same form text"));
    expect(velocity(await scored(body(1)))).toBe(false);
    expect(velocity(await scored(body(2)))).toBe(false);
    const third = await scored(body(3));
    expect(third.reasons.find((x) => x.startsWith("The same form text"))).toMatch(
      /about 3 repeat-velocity attempts/,
    );
  });

  it("repeats of one text do not push other texts out of the three counted", async () => {
    // A text of its own per request, sent three times in different case, then one text all share.
    const own = (i: number) => `request-${i}-aaaaaaaaaaaaaaaa`;
    const body = (i: number) => ({
      action: "repeat-slots",
      session: `rt${i}`,
      subject: { formDataHashed: [own(i), own(i).toUpperCase(), own(i), "bbbbbbbbbbbbbbbb"] },
    });
    await scored(body(1));
    await scored(body(2));
    const third = await scored(body(3));
    expect(third.reasons.find((x) => x.startsWith("The same form text"))).toMatch(
      /about 3 repeat-slots attempts/,
    );
  });

  it("repeated form text cannot dodge the rate limit: past the budget it is 429, never degraded", async () => {
    const small = await makeTestApp({
      clock: windowStartClock(60),
      env: { WARDEN_RATE_LIMIT_MAX: "3", WARDEN_RATE_LIMIT_WINDOW_SECONDS: "60" },
    });
    try {
      await small.tenant("budget");
      const k = (await small.key("budget")).apiKey;
      const hostile = {
        action: "signup",
        session: "s2",
        subject: { userAgent: "curl/8.5.0", formDataHashed: ["0123456789abcdef", "0123456789ABCDEF"] },
      };
      for (let i = 0; i < 3; i++) {
        const res = await verify(hostile, small, k);
        expect(res.statusCode).toBe(200);
        expect(res.json().degraded).toBe(false);
      }
      expectError(await verify(hostile, small, k), 429, "rate_limited");
      expectError(await verify({ action: "signup", subject: {} }, small, k), 429, "rate_limited");
    } finally {
      await small.close();
    }
  });
});

describe("subject.ip is one address; ipTrunc no wider than /24 or /48", () => {
  it.each([
    "203.0.113.5/32",
    "203.0.113.5/24",
    "::ffff:203.0.113.5/128",
    "2001:db8:1::1/128",
    "203.0.113.0/16",
  ])("subject.ip %s (a network) → 400 invalid_field naming subject.ip", async (ip) => {
    const res = await verify({ action: "signup", subject: { ip } });
    expectError(res, 400, "invalid_field");
    expect(res.json().message).toMatch(/^subject\.ip is not a single IPv4 or IPv6 address/);
  });

  // The old inet_aton spellings name another address than the text does (0313.0.113.5 is octal for
  // 203.0.113.5): a list or a log that reads the text would not see the address matched.
  it.each(["0313.0.113.5", "203.0.113.05", "0xcb.0.113.5", "203.113.5", "3405803781", "::ffff:0313.0.113.5"])(
    "subject.ip %s (not four decimal numbers) → 400 invalid_field naming subject.ip",
    async (ip) => {
      const res = await verify({ action: "signup", subject: { ip } });
      expectError(res, 400, "invalid_field");
      expect(res.json().message).toMatch(/^subject\.ip is not a single IPv4 or IPv6 address/);
    },
  );

  it.each(["0313.0.113.0/24", "203.0.113.00/24", "0xcb.0.113.5", "203.113.5"])(
    "subject.ipTrunc %s (not four decimal numbers) → 400 invalid_field naming subject.ipTrunc",
    async (ipTrunc) => {
      const res = await verify({ action: "signup", subject: { ipTrunc } });
      expectError(res, 400, "invalid_field");
      expect(res.json().message).toMatch(/^subject\.ipTrunc is not an IP network or address/);
    },
  );

  it.each(["203.0.113.5", "::ffff:203.0.113.5", "2001:db8:1::5", " 203.0.113.200 "])(
    "subject.ip %s on a denied network → deny by the tenant's list",
    async (ip) => {
      const v = await scored({
        action: "signup",
        subject: { ip, userAgent: CHROME_UA, headers: CHROME_HEADERS },
      });
      expect(v.decision).toBe("deny");
      expect(v.reasons[0]).toMatch(/network/);
    },
  );

  it.each([
    "203.0.113.0/23",
    "203.0.0.0/16",
    "0.0.0.0/0",
    "::ffff:203.0.113.0/112",
    "2001:db8::/32",
    "2001:db8:1::/47",
  ])(
    "subject.ipTrunc %s (wider than Warden's truncation) → 400 invalid_field naming subject.ipTrunc",
    async (ipTrunc) => {
      const res = await verify({ action: "signup", subject: { ipTrunc } });
      expectError(res, 400, "invalid_field");
      expect(res.json().message).toMatch(/^subject\.ipTrunc is wider than \/24 \(IPv4\) or \/48 \(IPv6\)/);
    },
  );

  it.each([
    "203.0.113.0/24",
    "203.0.113.77",
    "203.0.113.128/25",
    "203.0.113.5/32",
    "::ffff:203.0.113.0/120",
    "2001:db8:1::/48",
    "2001:db8:1:2::/64",
    "2001:db8:1::9",
  ])(
    "subject.ipTrunc %s (an address, or /24 or /48 or narrower) is truncated and denied",
    async (ipTrunc) => {
      const v = await scored({
        action: "signup",
        subject: { ipTrunc, userAgent: CHROME_UA, headers: CHROME_HEADERS },
      });
      expect(v.decision).toBe("deny");
    },
  );
});

describe("names of Object.prototype members in request data find nothing", () => {
  it("browserSignals.mismatch of toString, constructor, __proto__ is ignored, not a page-vs-worker mismatch", async () => {
    const plain = await scored({
      action: "proto",
      subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS },
    });
    const v = await scored({
      action: "proto",
      subject: {
        userAgent: CHROME_UA,
        headers: CHROME_HEADERS,
        browserSignals: { mismatch: ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"] },
      },
    });
    expect(v.reasons.join(" ")).not.toMatch(/worker|native code/);
    expect(v.decision).toBe(plain.decision);
    expect(v.actorType).toBe(plain.actorType);
  });

  it("beside a real name, only the real name is reported", async () => {
    const v = await scored({
      action: "proto",
      subject: {
        userAgent: CHROME_UA,
        headers: CHROME_HEADERS,
        browserSignals: { mismatch: ["toString", "platform", "constructor"] },
      },
    });
    expect(v.reasons.find((r) => r.includes("worker"))).toMatch(
      /read a different platform of the same browser/,
    );
  });

  it.each(['"constructor"', '"__proto__"', "constructor"])(
    "Sec-CH-UA-Platform %s → scored, not degraded",
    async (platform) => {
      await scored({
        action: "proto",
        subject: { userAgent: CHROME_UA, headers: { ...CHROME_HEADERS, "sec-ch-ua-platform": platform } },
      });
    },
  );

  it("a signature covering a header named constructor that was not forwarded reads it as absent", async () => {
    const agent = await registerAgent(t.store, "Proto Agents", "https://proto.example");
    await t.deps.agents.reload();
    const headers = { host: "app.example", "signature-agent": `agent1="${agent.signatureAgent}"` };
    const created = Math.floor(Date.now() / 1000) - 5;
    const signed = signRequest({ ...headers, constructor: "x" }, agent.privateKey, {
      components: ["@authority", ["signature-agent", { key: "agent1" }], "constructor"],
      keyid: agent.keyid,
      alg: "ed25519",
      created,
      expires: created + 300,
    });
    const v = await scored({
      action: "proto",
      subject: {
        userAgent: "ProtoBot/1.0",
        headers: { ...headers, signature: signed.signature, "signature-input": signed.signatureInput },
      },
    });
    // Not Object's constructor function, read as a header value (a TypeError's text in the reason).
    expect(v.reasons[0]).toBe(
      'A Web Bot Auth signature is present but fails (No header "constructor" found in headers): a sign of a forged or replayed agent.',
    );
  });
});

describe("a user agent forwarded in headers has subject.userAgent's cap", () => {
  it.each([
    ["user-agent", `Mozilla/5.0 ${"x".repeat(2100)}`],
    ["User-Agent", ["Mozilla/5.0 (X11; Linux x86_64)", "y".repeat(2040)]],
  ])("headers[%j] over 2,048 characters → 400 invalid_field naming it", async (name, value) => {
    const res = await verify({ action: "signup", subject: { headers: { [name]: value } } });
    expectError(res, 400, "invalid_field");
    expect(res.json().message).toBe(
      `subject.headers.${name} is longer than 2048 characters, the cap of subject.userAgent.`,
    );
  });

  it("2,048 characters are accepted, from headers as from subject.userAgent; 2,049 in userAgent are not", async () => {
    const ua = `Mozilla/5.0 ${"z".repeat(2048 - 12)}`;
    expect(ua).toHaveLength(2048);
    await scored({ action: "signup", subject: { headers: { "user-agent": ua } } });
    await scored({ action: "signup", subject: { userAgent: ua } });
    expectError(await verify({ action: "signup", subject: { userAgent: `${ua}z` } }), 400, "invalid_field");
  });
});

describe("many signatures over one large Signature-Agent are bounded work, never the degraded answer", () => {
  const many = (n: number) => ({
    "signature-input": Array.from(
      { length: n },
      (_, i) => `a${i}=("@authority" "signature-agent";key="z");created=1;expires=2;tag="web-bot-auth"`,
    ).join(","),
    signature: Array.from({ length: n }, (_, i) => `a${i}=::`).join(","),
    "signature-agent": Array.from({ length: 560 }, (_, i) => `m${i}=:AAAA:`).join(", "),
  });

  it("more than 8 signatures is a signature Warden refuses to check: invalid, scored", async () => {
    const v = await scored({ action: "signup", subject: { userAgent: "curl/8.5.0", headers: many(64) } });
    expect(v.decision).not.toBe("allow");
    expect(v.actorType).toBe("agent_abusive");
    expect(v.reasons.join(" ")).toMatch(/more than 8 signatures/);
  });

  it("8 of them, each over the large Signature-Agent, are checked and scored", async () => {
    const v = await scored({ action: "signup", subject: { userAgent: "curl/8.5.0", headers: many(8) } });
    expect(v.decision).not.toBe("allow");
  });
});
