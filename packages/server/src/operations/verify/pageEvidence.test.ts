import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_TOKEN_KEY_CHECK_MS } from "../../app.js";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";
import { keepPublishedMs, newSigningKey } from "../../tokens/signingKeys.js";

/**
 * Page evidence (docs/api.md, "Page evidence"): POST /v1/page-tokens issues a token when a form's page
 * loads; verify reads subject.page.token (Warden's, this tenant's, how long ago, from where) and the
 * page's behaviour counts. A tenant's requirePage makes an attempt without it a program.
 */
const CHROME_UA =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
const NET = "198.51.100.0/24";
/** A person's behaviour report: typed, moved the pointer about, pressed once. */
const PERSON = {
  elapsedMs: 9000,
  keys: 31,
  inserted: 0,
  pasted: 0,
  pointerMoves: 84,
  clicks: 2,
  untrusted: 0,
};

let t: TestApp;
let now = Date.now();
let apiKey: string;
let otherKey: string;
let plainKey: string;

beforeAll(async () => {
  t = await makeTestApp({ clock: () => now });
  for (const [id, policy] of [
    ["pages", { requirePage: true }],
    ["pages-other", { requirePage: true }],
    ["pages-optional", {}],
  ] as const) {
    await t.tenant(id);
    await t.store.policies.put(id, JSON.stringify(policy), now);
  }
  apiKey = (await t.key("pages")).apiKey;
  otherKey = (await t.key("pages-other")).apiKey;
  plainKey = (await t.key("pages-optional")).apiKey;
});
afterAll(async () => {
  await t?.close();
});

/** POST /v1/page-tokens on `app` with `key`, answered as it is. */
const askPageToken = (
  app: TestApp,
  key: string,
  subject: Record<string, unknown> = { userAgent: CHROME_UA, ipTrunc: NET },
) => app.app.inject({ method: "POST", url: "/v1/page-tokens", headers: bearer(key), payload: { subject } });

async function pageToken(
  key = apiKey,
  subject: Record<string, unknown> = { userAgent: CHROME_UA, ipTrunc: NET },
) {
  const res = await askPageToken(t, key, subject);
  expect(res.statusCode).toBe(200);
  return res.json() as { pageToken: string; expiresAt: string };
}

let sessions = 0;
async function verify(page: unknown, opts: { key?: string; subject?: Record<string, unknown> } = {}) {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(opts.key ?? apiKey),
    payload: {
      action: "signup",
      session: `page-${++sessions}`,
      subject: {
        userAgent: CHROME_UA,
        ipTrunc: NET,
        ...opts.subject,
        ...(page === undefined ? {} : { page }),
      },
    },
  });
  expect(res.statusCode).toBe(200);
  const verdict = res.json() as { decision: string; actorType: string; eventId: string; reasons: string[] };
  const event = await t.store.events.get(
    opts.key === otherKey ? "pages-other" : opts.key === plainKey ? "pages-optional" : "pages",
    verdict.eventId,
  );
  const findings = ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
  return { ...verdict, findings };
}

describe("POST /v1/page-tokens", () => {
  it("issues a token and its expiry to a verify:write key", async () => {
    const { pageToken: token, expiresAt } = await pageToken();
    expect(token).toMatch(/^wpt1\./);
    expect(Date.parse(expiresAt)).toBe(now + 12 * 3_600_000);
  });

  it("needs verify:write (403 insufficient_scope) and a key (401 invalid_api_key)", async () => {
    const { apiKey: reader } = await t.key("pages", { scopes: ["ledger:read"] });
    const refused = await t.app.inject({
      method: "POST",
      url: "/v1/page-tokens",
      headers: bearer(reader),
      payload: {},
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe("insufficient_scope");
    const anonymous = await t.app.inject({ method: "POST", url: "/v1/page-tokens", payload: {} });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe("invalid_api_key");
  });

  it("refuses a raw subject.ip without the tenant's opt-in, and an address that is not one (400)", async () => {
    const raw = await t.app.inject({
      method: "POST",
      url: "/v1/page-tokens",
      headers: bearer(apiKey),
      payload: { subject: { ip: "198.51.100.7" } },
    });
    expect(raw.statusCode).toBe(403);
    expect(raw.json().code).toBe("raw_pii_not_enabled");
    const bad = await t.app.inject({
      method: "POST",
      url: "/v1/page-tokens",
      headers: bearer(apiKey),
      payload: { subject: { ipTrunc: "not-a-network" } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_field");
  });
});

describe("POST /v1/page-tokens and a revoked key", () => {
  const ask = (app: TestApp, key: string) => askPageToken(app, key);
  /** Lets the background re-check of a key (KnownCallers.recheck) settle. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it("a revoked key gets no page token (401 invalid_api_key) once PAGE_TOKEN_KEY_CHECK_MS has passed since the process last checked it and the re-check it starts has answered", async () => {
    const { keyId, apiKey: key } = await t.key("pages");
    expect((await ask(t, key)).statusCode).toBe(200);
    expect(await t.store.apiKeys.revoke(keyId, now)).toBe(true);
    // Within the window the last check stands.
    now += PAGE_TOKEN_KEY_CHECK_MS - 1000;
    expect((await ask(t, key)).statusCode).toBe(200);
    await settle();
    expect((await ask(t, key)).statusCode).toBe(200);
    // Past it, the request is answered as last checked and the key is checked again.
    now += 2000;
    expect((await ask(t, key)).statusCode).toBe(200);
    // Once the re-check has answered (a store read: waited for, up to 2 s on a busy machine).
    let refused = await ask(t, key);
    for (let i = 0; i < 100 && refused.statusCode === 200; i++) {
      await settle();
      refused = await ask(t, key);
    }
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe("invalid_api_key");
    // Verify, which shares the memory, reads the store for it too now: refused, nothing recorded.
    const verified = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(key),
      payload: { action: "signup", subject: { userAgent: CHROME_UA, ipTrunc: NET } },
    });
    expect(verified.statusCode).toBe(401);
  });

  it("a stale key is checked once at a time, not again within a second of a failed check; while the store cannot be read the last check stands, and a key never seen gets 503 page_token_unavailable", async () => {
    let down = false;
    let lookups = 0;
    let at = Date.now();
    const faulty = await makeTestApp({
      clock: () => at,
      wrapStore: (store) => ({
        ...store,
        apiKeys: {
          ...store.apiKeys,
          findByHash: (hash) => {
            lookups += 1;
            return down
              ? Promise.reject(new StoreUnavailableError("the test's store is down"))
              : store.apiKeys.findByHash(hash);
          },
        },
      }),
    });
    try {
      await faulty.tenant("pages");
      const { apiKey: seen } = await faulty.key("pages");
      const { apiKey: unseen } = await faulty.key("pages");
      expect((await ask(faulty, seen)).statusCode).toBe(200);
      const first = lookups;
      // Within the window: no store read at all.
      for (let i = 0; i < 5; i++) expect((await ask(faulty, seen)).statusCode).toBe(200);
      expect(lookups).toBe(first);
      at += PAGE_TOKEN_KEY_CHECK_MS + 1000;
      down = true;
      // Five requests at once past the window: one re-check.
      const answers = await Promise.all(Array.from({ length: 5 }, () => ask(faulty, seen)));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
      await settle();
      expect(lookups).toBe(first + 1);
      // It failed: not tried again within a second, then tried once more.
      expect((await ask(faulty, seen)).statusCode).toBe(200);
      await settle();
      expect(lookups).toBe(first + 1);
      at += 1500;
      expect((await ask(faulty, seen)).statusCode).toBe(200);
      await settle();
      expect(lookups).toBe(first + 2);
      const refused = await ask(faulty, unseen);
      expect(refused.statusCode).toBe(503);
      expect(refused.json().code).toBe("page_token_unavailable");
    } finally {
      await faulty.close();
    }
  });
});

describe("verify reads page evidence", () => {
  it("requirePage: an attempt without a page token is a program (page_evidence_missing, agent_abusive, not allowed)", async () => {
    const v = await verify(undefined);
    expect(v.findings).toContain("page_evidence_missing");
    expect(v.actorType).toBe("agent_abusive");
    expect(v.decision).not.toBe("allow");
  });

  it("without requirePage a missing page token is no evidence either way", async () => {
    const v = await verify(undefined, { key: plainKey });
    expect(v.findings).not.toContain("page_evidence_missing");
    expect(v.decision).toBe("allow");
  });

  it("a page token used after a person's fill-in time, with a person's behaviour, adds no finding", async () => {
    const { pageToken: token } = await pageToken();
    now += 8_000;
    const v = await verify({ token, behaviour: PERSON });
    expect(v.findings.filter((f) => f.startsWith("page_"))).toEqual([]);
    expect(v.decision).toBe("allow");
  });

  it("a form sent faster than a person fills it in is automation (page_submitted_fast), from the token's own issue time", async () => {
    const { pageToken: token } = await pageToken();
    now += 400;
    // The page claims it took 9 s: the server's clock decides.
    const v = await verify({ token, behaviour: PERSON });
    expect(v.findings).toContain("page_submitted_fast");
    expect(v.actorType).toBe("agent_abusive");
  });

  it("an altered token, another tenant's token and a made-up one are page_token_invalid", async () => {
    const { pageToken: token } = await pageToken();
    const { pageToken: foreign } = await pageToken(otherKey);
    now += 8_000;
    const last = token.at(-2) === "A" ? "B" : "A";
    const altered = `${token.slice(0, -2)}${last}${token.at(-1)}`;
    for (const bad of [altered, foreign, "wpt1.sig_x.eyJ0IjoicGFnZXMifQ.AAAA", "anything"]) {
      const v = await verify({ token: bad, behaviour: PERSON });
      expect(v.findings).toContain("page_token_invalid");
      expect(v.actorType).toBe("agent_abusive");
    }
    // The other tenant's token is valid for the other tenant.
    const own = await verify({ token: foreign, behaviour: PERSON }, { key: otherKey });
    expect(own.findings).not.toContain("page_token_invalid");
  });

  it("a token issued to another user agent or network says so", async () => {
    const { pageToken: token } = await pageToken(apiKey, {
      userAgent: `${CHROME_UA} Edg/124.0`,
      ipTrunc: "203.0.113.0/24",
    });
    now += 8_000;
    const v = await verify({ token, behaviour: PERSON });
    expect(v.findings).toEqual(expect.arrayContaining(["page_other_user_agent", "page_other_network"]));
  });

  it("a token asked for without a user agent or network binds the attempt to having none, not to any", async () => {
    const { pageToken: token } = await pageToken(apiKey, {});
    now += 8_000;
    const v = await verify({ token, behaviour: PERSON }, { subject: { ipTrunc: "198.51.100.0/24" } });
    expect(v.findings).toEqual(expect.arrayContaining(["page_other_user_agent", "page_other_network"]));
    // And the other way round: a bound token sent without what it was bound to.
    const { pageToken: bound } = await pageToken(apiKey, {
      userAgent: CHROME_UA,
      ipTrunc: "198.51.100.0/24",
    });
    now += 8_000;
    const bare = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: { action: "signup", subject: { page: { token: bound, behaviour: PERSON } } },
    });
    const event = await t.store.events.get("pages", (bare.json() as { eventId: string }).eventId);
    const ids = ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
    expect(ids).toEqual(expect.arrayContaining(["page_other_user_agent", "page_other_network"]));
  });

  it("one token across many attempts is a replay (velocity_page_token)", async () => {
    const { pageToken: token } = await pageToken();
    now += 8_000;
    const seen: string[][] = [];
    for (let i = 0; i < 6; i++) seen.push((await verify({ token, behaviour: PERSON })).findings);
    expect(seen[0]).not.toContain("velocity_page_token");
    expect(seen[5]).toContain("velocity_page_token");
  });

  it("text inserted without a key press, a pointer that teleports to its clicks, and script-made events are read from the report", async () => {
    // A token of its own for each attempt (one token in many attempts is a replay of its own).
    // And a network of its own: this file's other attempts have used up NET's hourly velocity limit.
    let n = 0;
    const fresh = async (behaviour: Record<string, number>) => {
      const subject = { userAgent: CHROME_UA, ipTrunc: `203.0.${++n}.0/24` };
      const { pageToken: token } = await pageToken(apiKey, subject);
      now += 8_000;
      return verify({ token, behaviour }, { subject });
    };
    const filled = await fresh({ ...PERSON, keys: 0, inserted: 2 });
    expect(filled.findings).toContain("page_input_without_keys");
    // Dictation does this too: it raises the risk, it does not call the attempt automation.
    expect(filled.actorType).not.toBe("agent_abusive");
    expect(filled.decision).not.toBe("deny");
    const clicked = await fresh({ ...PERSON, pointerMoves: 1, clicks: 1 });
    expect(clicked.findings).toContain("page_pointer_teleported");
    // Voice control (dictated text, clicks without pointer paths): challenged at worst, never refused.
    const voice = await fresh({ ...PERSON, keys: 0, inserted: 4, pointerMoves: 0, clicks: 2 });
    expect(voice.findings).toEqual(
      expect.arrayContaining(["page_input_without_keys", "page_pointer_teleported"]),
    );
    expect(voice.decision, JSON.stringify(voice)).not.toBe("deny");
    const synthetic = await fresh({ ...PERSON, untrusted: 3 });
    expect(synthetic.findings).toContain("page_synthetic_events");
    // Autofill and a touch screen are people: no finding.
    const autofill = await fresh({ ...PERSON, keys: 0, inserted: 0, autofilled: 2 });
    const touch = await fresh({ ...PERSON, pointerMoves: 0, clicks: 1, touches: 6 });
    for (const v of [autofill, touch]) expect(v.findings.filter((f) => f.startsWith("page_"))).toEqual([]);
  });

  it("behaviour counts must be whole numbers (400 invalid_field)", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: { action: "signup", subject: { page: { token: "x", behaviour: { keys: -1 } } } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("invalid_field");
  });

  it("a token outlives a signing-key rotation (the retired key stays published)", async () => {
    const { pageToken: token } = await pageToken();
    const before = t.deps.keyring.activeSigner().kid;
    await t.store.signingKeys.rotate(await newSigningKey(now), keepPublishedMs(300, 10));
    await t.deps.keyring.reload();
    expect(t.deps.keyring.activeSigner().kid).not.toBe(before);
    now += 8_000;
    const v = await verify({ token, behaviour: PERSON });
    expect(v.findings).not.toContain("page_token_invalid");
  });
});
