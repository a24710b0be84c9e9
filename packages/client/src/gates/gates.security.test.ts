import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WardenClient } from "../client.js";
import { sha256Hex, trimmedLowerCaseEmail } from "../subject.js";
import {
  BANNED,
  CHALLENGED,
  CLEAN,
  FAKE_TENANT,
  fakeWarden,
  GATES,
  type GateApp,
  type GateName,
} from "../testing/gateApps.js";
import type { GateOptions, VerdictSeen } from "./core.js";

/**
 * What a red team tried against the gates, as rules every gate must keep (Express, Fastify, Hono, the
 * fetch-API gate and @warden/client/next's route), each against a Warden that denies one address: the handler acts on exactly
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
  ["urlencoded", FORM, `email=${CLEAN}&name=Ann`, 200],
  ["urlencoded, deny-listed", FORM, `email=${BANNED}`, 403],
  [
    "urlencoded, odd casing and a charset",
    "Application/X-WWW-Form-URLEncoded; charset=UTF-8",
    `email=${BANNED}`,
    403,
  ],
  [
    "multipart",
    MULTIPART,
    multipart([
      ["email", CLEAN],
      ["name", "Ann"],
    ]),
    { express: 415, others: 200 },
  ],
  ["multipart, deny-listed", MULTIPART, multipart([["email", BANNED]]), { express: 415, others: 403 }],
  [
    "multipart without a boundary",
    "multipart/form-data",
    multipart([["email", BANNED]]),
    { express: 415, others: 400 },
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
  ["polyglot sent as urlencoded", FORM, polyglot(CLEAN, BANNED), 200],
  ["polyglot sent as JSON", JSON_TYPE, polyglot(CLEAN, BANNED), 403],
  [
    "polyglot, urlencoded with a parameter naming JSON",
    `${FORM}; note=application/json`,
    polyglot(BANNED, CLEAN),
    403,
  ],
  ["JSON, duplicated key (deny-listed last)", JSON_TYPE, `{"email":"${CLEAN}","email":"${BANNED}"}`, 403],
  ["JSON, duplicated key (deny-listed first)", JSON_TYPE, `{"email":"${BANNED}","email":"${CLEAN}"}`, 200],
  ["urlencoded, duplicated key (deny-listed first)", FORM, `email=${BANNED}&email=${CLEAN}`, 400],
  ["urlencoded, duplicated key (deny-listed last)", FORM, `email=${CLEAN}&email=${BANNED}`, 400],
  [
    "multipart, duplicated key",
    MULTIPART,
    multipart([
      ["email", BANNED],
      ["email", CLEAN],
    ]),
    { express: 415, others: 400 },
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

    // Express's own parsers refuse these before the gate, in their own words, and so does Fastify
    // for a media type no parser of its takes (a 415 of its own).
    it.runIf(name !== "express")(
      "refusals say why: 415 unsupported_media_type, 400 duplicate_field, 400 invalid_body",
      async () => {
        if (name !== "fastify") {
          expect((await send(app.url, "text/form", "{}")).json).toMatchObject({
            code: "unsupported_media_type",
          });
        }
        expect((await send(app.url, FORM, "email=a&email=b")).json).toMatchObject({
          code: "duplicate_field",
        });
        expect((await send(app.url, MULTIPART.split(";")[0] as string, "x")).json).toMatchObject({
          code: "invalid_body",
        });
        if (name !== "fastify") {
          expect((await send(app.url, JSON_TYPE, "{")).json).toMatchObject({ code: "invalid_body" });
        }
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

  describe("the gate checks each allow's verdictToken before the handler runs", () => {
    const changes: [string, Record<string, unknown>][] = [
      ["another tenant", { tid: "someone-else" }],
      ["another session", { sub: "ws_another" }],
      ["another action", { action: "newsletter" }],
      ["another event", { jti: "evt_other" }],
      ["another issuer", { iss: "https://elsewhere" }],
      ["a decision other than the verdict's", { decision: "deny" }],
    ];
    it.each(changes)(
      "a receipt naming %s: 403 receipt_invalid, the handler never runs, onVerdict told why",
      async (_what, change) => {
        const seen: VerdictSeen[] = [];
        const app = await GATES[name](
          gate(fakeWarden({ receipt: change }).client, { onVerdict: (v) => void seen.push(v) }),
        );
        apps.push(app);
        const res = await send(app.url, JSON_TYPE, JSON.stringify({ email: CLEAN }));
        expect(res).toMatchObject({ status: 403, json: { error: "forbidden", code: "receipt_invalid" } });
        expect(res.json.read).toBeUndefined();
        expect(res.json.reference).toBe(seen[0]?.eventId);
        expect(seen[0]?.receiptInvalid).toMatch(/\S/);
      },
    );

    it("a checked allow hands the handler the form, the eventId and the mode; log_only goes through as log_only", async () => {
      for (const logOnly of [false, true]) {
        const app = await GATES[name](gate(fakeWarden({ logOnly }).client));
        apps.push(app);
        const email = logOnly ? BANNED : CLEAN;
        const res = await send(
          app.url,
          JSON_TYPE,
          JSON.stringify({ email, name: "Ann", wardenSignals: "{}" }),
        );
        expect(res).toMatchObject({
          status: 200,
          json: { form: { email, name: "Ann" }, enforcementMode: logOnly ? "log_only" : "enforce" },
        });
      }
    });

    it("a gate whose client has no tenantId refuses to start (nothing to check receipts against)", async () => {
      const client = new WardenClient({ baseUrl: "http://warden.test", apiKey: "wdn_test" });
      await expect(GATES[name](gate(client))).rejects.toThrow(/tenantId/);
      expect(FAKE_TENANT).toBe(fakeWarden().client.tenantId);
    });
  });

  describe("a plain HTML form post (a page navigation) gets pages, and the challenge round trip works", () => {
    const NAVIGATION = { "sec-fetch-mode": "navigate", "sec-fetch-site": "same-origin", accept: "text/html" };
    /** A POST with exactly these headers (undici's request: fetch() adds a Sec-Fetch-Mode of its own). */
    const post = async (body: string, headers: Record<string, string>) => {
      const res = await request(`${app.url}/signup`, {
        method: "POST",
        reset: true,
        headers: { "content-type": FORM, ...headers },
        body,
      });
      const type = res.headers["content-type"];
      return {
        status: res.statusCode,
        type: typeof type === "string" ? type : null,
        text: await res.body.text(),
      };
    };
    let app: GateApp;
    beforeAll(async () => {
      app = await GATES[name](gate(fakeWarden().client));
      apps.push(app);
    });

    it("challenged: a page holding <warden-challenge auto submit> in a form that posts the same fields back; that post is allowed, cleared", async () => {
      const signals = encodeURIComponent(JSON.stringify({ webdriver: false }));
      const first = await post(`email=${CHALLENGED}&name=%3Cb%3EAnn&wardenSignals=${signals}`, NAVIGATION);
      expect(first.status).toBe(428);
      expect(first.type).toMatch(/^text\/html/);
      expect(first.text).toContain('<script type="module" src="/warden/warden.js"></script>');
      expect(first.text).toMatch(/<form method="post" action="\/signup">/);
      // The fields, escaped: nothing the person typed becomes markup.
      expect(first.text).toContain('<input type="hidden" name="name" value="&#60;b&#62;Ann">');
      // The page's evidence goes back too: the re-verify reads what the request carries.
      expect(first.text).toContain(
        '<input type="hidden" name="wardenSignals" value="{&#34;webdriver&#34;:false}">',
      );
      const ticket = /<warden-challenge ticket="([^"]+)" auto submit>/.exec(first.text)?.[1];
      expect(ticket).toMatch(/^ey/);
      // What the widget posts once the check clears: the page's fields, the ticket and the challengeId.
      const fields = [...first.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
        ([, k, v]) => [
          k as string,
          (v as string).replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))),
        ],
      );
      const again = new URLSearchParams([
        ...fields,
        ["wardenTicket", ticket as string],
        ["wardenChallengeId", "chl_1"],
      ]);
      const cleared = await post(again.toString(), NAVIGATION);
      expect(cleared.status).toBe(200);
      expect(JSON.parse(cleared.text)).toMatchObject({
        cleared: true,
        form: { email: CHALLENGED, name: "<b>Ann" },
      });
    });

    it("denied: a page with the reference; a script's post (no navigation) still gets JSON", async () => {
      const denied = await post(`email=${BANNED}`, NAVIGATION);
      expect(denied.status).toBe(403);
      expect(denied.text).toMatch(/quote the reference evt_\d+/);
      const scripted = await post(`email=${BANNED}`, { "sec-fetch-mode": "cors" });
      expect(scripted.type).toMatch(/^application\/json/);
      expect(JSON.parse(scripted.text)).toMatchObject({ code: "warden_denied" });
    });

    it("a form another site's page posts here gets JSON, never the page that would post it back from this origin", async () => {
      for (const headers of [
        { ...NAVIGATION, "sec-fetch-site": "cross-site" },
        { accept: "text/html", origin: "https://elsewhere.example" },
        { accept: "text/html" },
      ]) {
        const res = await post(`email=${CHALLENGED}`, headers);
        expect(res.status).toBe(428);
        expect(res.type).toMatch(/^application\/json/);
      }
      // A browser without Fetch Metadata, posting from this origin, gets the page.
      const host = new URL(app.url).host;
      const own = await post(`email=${CHALLENGED}`, { accept: "text/html", origin: `http://${host}` });
      expect(own.type).toMatch(/^text\/html/);
    });
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
        // The gate's fields alone: the form is the ticket's `pending` (the address scored), or nothing.
        expect(alone).toMatchObject({
          status: 200,
          json: {
            cleared: true,
            read: pending ? [CHALLENGED] : [],
            pending: pending ? { email: CHALLENGED } : null,
          },
        });
      });
    }
  });
});
