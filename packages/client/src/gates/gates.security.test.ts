import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex, trimmedLowerCaseEmail } from "../subject.js";
import {
  BANNED,
  CHALLENGED,
  CLEAN,
  fakeWarden,
  GATES,
  type GateApp,
  type GateName,
} from "../testing/gateApps.js";
import type { GateOptions } from "./core.js";

/**
 * What a red team tried against the gates, as rules every gate must keep (Express, Fastify, Hono and
 * the fetch-API gate), each against a Warden that denies one address: the handler acts on exactly
 * what Warden scored or the request is refused; a failing hook fails the request closed; a
 * challenge's clear allows only the form it was issued for.
 */
const SECRET = "a-ticket-secret-of-at-least-32-characters";
const gate = (client: GateOptions["client"], extra: Partial<GateOptions> = {}): GateOptions => ({
  client,
  action: "signup",
  ticketSecret: SECRET,
  email: (body) => body.email,
  trustedProxies: ["127.0.0.1"],
  ...extra,
});
const apps: GateApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

async function send(url: string, type: string | undefined, body: string | undefined) {
  const res = await fetch(`${url}/signup`, {
    method: "POST",
    headers: type === undefined ? {} : { "content-type": type },
    // bytes, so that fetch adds no Content-Type of its own
    ...(body === undefined ? {} : { body: new TextEncoder().encode(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: (text.startsWith("{") ? JSON.parse(text) : {}) as Record<string, unknown>,
  };
}

const BOUNDARY = "wardenTestBoundary";
const multipart = (fields: [string, string][]) =>
  `${fields.map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join("")}--${BOUNDARY}--\r\n`;
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";
/** Valid JSON whose urlencoded reading has another email: `second` as JSON, `first` as form data. */
const polyglot = (first: string, second: string) => `{"x":"&email=${first}&","email":"${second}"}`;

type Expected = number | (Partial<Record<GateName, number>> & { others: number });
/** [case, Content-Type, body, status per gate: 200 the handler ran, 403 Warden denied, 4xx refused]. */
const CASES: [string, string | undefined, string | undefined, Expected][] = [
  ["JSON", JSON_TYPE, JSON.stringify({ email: CLEAN, name: "Ann" }), 200],
  ["JSON, deny-listed", JSON_TYPE, JSON.stringify({ email: BANNED }), 403],
  [
    "JSON, odd casing and a charset",
    "Application/JSON; Charset=UTF-8",
    JSON.stringify({ email: BANNED }),
    403,
  ],
  ["urlencoded", FORM, `email=${CLEAN}&name=Ann`, { fastify: 415, others: 200 }],
  ["urlencoded, deny-listed", FORM, `email=${BANNED}`, { fastify: 415, others: 403 }],
  [
    "urlencoded, odd casing and a charset",
    "Application/X-WWW-Form-URLEncoded; charset=UTF-8",
    `email=${BANNED}`,
    { fastify: 415, others: 403 },
  ],
  [
    "multipart",
    MULTIPART,
    multipart([
      ["email", CLEAN],
      ["name", "Ann"],
    ]),
    { express: 415, fastify: 415, others: 200 },
  ],
  [
    "multipart, deny-listed",
    MULTIPART,
    multipart([["email", BANNED]]),
    { express: 415, fastify: 415, others: 403 },
  ],
  [
    "multipart without a boundary",
    "multipart/form-data",
    multipart([["email", BANNED]]),
    { express: 415, fastify: 415, others: 400 },
  ],
  ["text/plain holding JSON", "text/plain", JSON.stringify({ email: BANNED }), 415],
  ["text/form holding JSON", "text/form", JSON.stringify({ email: BANNED }), 415],
  ["text/html holding form data", "text/html", `email=${BANNED}`, 415],
  [
    "bytes (application/octet-stream) holding JSON",
    "application/octet-stream",
    JSON.stringify({ email: BANNED }),
    415,
  ],
  ["no Content-Type, a JSON body", undefined, JSON.stringify({ email: BANNED }), 415],
  ["no Content-Type, no body", undefined, undefined, 200],
  ["JSON Content-Type, no body", JSON_TYPE, undefined, { fastify: 400, others: 200 }],
  ["polyglot sent as urlencoded", FORM, polyglot(CLEAN, BANNED), { fastify: 415, others: 200 }],
  ["polyglot sent as JSON", JSON_TYPE, polyglot(CLEAN, BANNED), 403],
  [
    "polyglot, urlencoded with a parameter naming JSON",
    `${FORM}; note=application/json`,
    polyglot(BANNED, CLEAN),
    { fastify: 415, others: 403 },
  ],
  ["JSON, duplicated key (deny-listed last)", JSON_TYPE, `{"email":"${CLEAN}","email":"${BANNED}"}`, 403],
  ["JSON, duplicated key (deny-listed first)", JSON_TYPE, `{"email":"${BANNED}","email":"${CLEAN}"}`, 200],
  [
    "urlencoded, duplicated key (deny-listed first)",
    FORM,
    `email=${BANNED}&email=${CLEAN}`,
    { fastify: 415, others: 400 },
  ],
  [
    "urlencoded, duplicated key (deny-listed last)",
    FORM,
    `email=${CLEAN}&email=${BANNED}`,
    { fastify: 415, others: 400 },
  ],
  [
    "multipart, duplicated key",
    MULTIPART,
    multipart([
      ["email", BANNED],
      ["email", CLEAN],
    ]),
    { express: 415, fastify: 415, others: 400 },
  ],
  ["a JSON array", JSON_TYPE, JSON.stringify([{ email: BANNED }]), 415],
  ["a JSON string", JSON_TYPE, JSON.stringify(BANNED), { express: 400, others: 415 }],
  ["malformed JSON", JSON_TYPE, `{"email":"${BANNED}"`, 400],
];
const statusFor = (expected: Expected, name: GateName) =>
  typeof expected === "number" ? expected : (expected[name] ?? expected.others);

describe.each(Object.keys(GATES) as GateName[])("the %s gate", (name) => {
  describe("verifies exactly the body its handler receives, or refuses it", () => {
    let app: GateApp;
    let asked: ReturnType<typeof fakeWarden>["asked"];
    beforeAll(async () => {
      const warden = fakeWarden();
      asked = warden.asked;
      app = await GATES[name](gate(warden.client));
      apps.push(app);
    });

    it.each(CASES)("%s", async (_case, type, body, expected) => {
      const before = asked.length;
      const res = await send(app.url, type, body);
      expect(res.status).toBe(statusFor(expected, name));
      if (res.status !== 200) return;
      // The handler ran after exactly one verify, and every email it can read is the one scored.
      expect(asked.length).toBe(before + 1);
      const scored = asked.at(-1)?.subject.emailSha256;
      for (const email of res.json.read as string[]) {
        expect(await sha256Hex(trimmedLowerCaseEmail(email))).toBe(scored);
      }
      if (scored !== undefined) expect(res.json.read).toContain(CLEAN);
    });

    // Express's and Fastify's own parsers refuse these before the gate, in their own words.
    it.runIf(name === "hono" || name === "fetch")(
      "refusals say why: 415 unsupported_media_type, 400 duplicate_field, 400 invalid_body",
      async () => {
        expect((await send(app.url, "text/form", "{}")).json).toMatchObject({
          code: "unsupported_media_type",
        });
        expect((await send(app.url, FORM, "email=a&email=b")).json).toMatchObject({
          code: "duplicate_field",
        });
        expect((await send(app.url, JSON_TYPE, "{")).json).toMatchObject({ code: "invalid_body" });
      },
    );
  });

  describe("a failing hook fails the request closed, through the framework's error path", () => {
    const failures: [string, () => void | Promise<void>][] = [
      [
        "throws",
        () => {
          throw new Error("the app's logger failed");
        },
      ],
      [
        "rejects",
        async () => {
          throw new Error("the app's logger failed");
        },
      ],
    ];
    it.each(failures)(
      "onVerdict that %s: 500 for an allow and a deny, the handler never runs, no crash",
      async (_how, hook) => {
        const unhandled: unknown[] = [];
        const record = (reason: unknown) => unhandled.push(reason);
        process.on("unhandledRejection", record);
        try {
          const app = await GATES[name](gate(fakeWarden().client, { onVerdict: hook }));
          apps.push(app);
          for (const email of [CLEAN, BANNED]) {
            const res = await send(app.url, JSON_TYPE, JSON.stringify({ email }));
            expect(res.status).toBe(500);
            expect(res.json.read).toBeUndefined();
          }
          expect(app.errors.map((e) => (e as Error).message)).toEqual([
            "the app's logger failed",
            "the app's logger failed",
          ]);
          await new Promise((r) => setTimeout(r, 20));
          expect(unhandled).toEqual([]);
        } finally {
          process.off("unhandledRejection", record);
        }
      },
    );
  });

  describe("a challenge's clear allows only the form its ticket was issued for", () => {
    for (const pending of [false, true]) {
      it(`${pending ? "with" : "without"} pending: the form re-submitted with another email is scored afresh (403), never allowed by the clear`, async () => {
        const warden = fakeWarden();
        const app = await GATES[name](
          gate(warden.client, pending ? { pending: (body) => ({ email: body.email }) } : {}),
        );
        apps.push(app);
        const form = { email: CHALLENGED, name: "Ann" };
        const first = await send(app.url, JSON_TYPE, JSON.stringify(form));
        expect(first).toMatchObject({ status: 428, json: { code: "warden_challenge" } });
        const resubmit = (body: Record<string, unknown>) =>
          send(
            app.url,
            JSON_TYPE,
            JSON.stringify({ ...body, wardenTicket: first.json.ticket, wardenChallengeId: "chl_1" }),
          );

        const swapped = await resubmit({ email: BANNED, name: "Ann" });
        expect(swapped.status).toBe(403);
        expect(warden.asked.at(-1)?.context?.challengeId).toBeUndefined();
        expect(await resubmit({ email: CHALLENGED, name: "Eve" })).toMatchObject({ status: 428 });

        // The same form (the page's evidence fields may differ) or the gate's fields alone resume it.
        const same = await resubmit({ ...form, wardenSignals: { webdriver: false } });
        expect(same).toMatchObject({ status: 200, json: { cleared: true } });
        expect(new Set(same.json.read as string[])).toEqual(new Set([CHALLENGED]));
        const alone = await resubmit({});
        expect(alone).toMatchObject({
          status: 200,
          json: { cleared: true, read: [], pending: pending ? { email: CHALLENGED } : null },
        });
      });
    }
  });
});
