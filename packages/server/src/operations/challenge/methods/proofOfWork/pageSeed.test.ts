import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../../store/interfaces.js";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../../../../testing/harness.js";
import { powDigest, solvePow } from "./proofOfWork.js";

/**
 * A page's proof of work, solved before it is asked (docs/api.md, page evidence): POST
 * /v1/page-tokens with `pow: true` hands the page the seed a challenge on its attempt will be sealed
 * with, at the tenant's severe difficulty; a proof_of_work challenge on an attempt that carried the
 * token is sealed with that seed, so the answer the page found while the person filled the form in
 * clears it at once. Difficulty is still the tier's, sealed at issue; an attempt without a page token
 * gets a random seed as before. (The severe difficulty itself is solved by a browser in
 * challengeWidget.browser.test.ts; here the challenges are the default tier's, 16^4 hashes.)
 */

let t: TestApp;
let now = Date.parse("2026-12-03T12:00:00.000Z");
let key: string;
let raisedKey: string;
const failing = new Set<string>();

beforeAll(async () => {
  t = await makeTestApp({
    clock: () => now,
    wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
  });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
  await t.tenant("raised");
  raisedKey = (await t.key("raised")).apiKey;
  await t.store.policies.put(
    "raised",
    JSON.stringify({ challenge: { powDifficulty: { default: 5, elevated: 6, severe: 7 } } }),
    now,
  );
});
afterAll(() => t.close());

type Json = Record<string, unknown>;
const post = async (url: string, payload: Json, apiKey = key) => {
  const res = await t.app.inject({ method: "POST", url, headers: bearer(apiKey), payload });
  return { status: res.statusCode, body: res.json() as Json };
};

interface PagePow {
  type: string;
  seed: string;
  difficulty: number;
  algorithm: string;
}
interface Issued {
  challengeId: string;
  instructions: { seed: string; difficulty: number };
}

let networks = 0;
/** A page loaded from its own network: its token with the proof of work, as the SDK's page route asks. */
async function pageLoad(apiKey = key) {
  const ipTrunc = `198.18.${++networks}.0/24`;
  const res = await post("/v1/page-tokens", { subject: { ipTrunc }, pow: true }, apiKey);
  expect(res.status).toBe(200);
  return { ipTrunc, token: res.body.pageToken as string, pow: res.body.pow as PagePow };
}

/** The form sent 8 s after its page loaded, with the page's token: a challenged attempt. */
async function submit(page: { ipTrunc: string; token: string }, session: string, apiKey = key) {
  now += 8_000;
  const res = await post(
    "/v1/verify",
    { action: "signup", session, subject: { ipTrunc: page.ipTrunc, page: { token: page.token } } },
    apiKey,
  );
  expect(res.body).toMatchObject({ decision: "challenge" });
  await t.deps.pendingEvents.flush();
  return res.body.eventId as string;
}

async function issue(eventId: string, session: string, riskTier?: string, apiKey = key) {
  const res = await post(
    "/v1/challenge",
    { eventId, session, ...(riskTier === undefined ? {} : { context: { riskTier } }) },
    apiKey,
  );
  expect(res.status).toBe(200);
  return res.body as unknown as Issued;
}

/** A nonce whose digest starts with exactly `zeros` zeros (solves that difficulty, not the next). */
function nonceWithExactly(seed: string, zeros: number): string {
  for (let i = 0; ; i++) {
    const digest = powDigest(seed, `n${i}`);
    if (digest.startsWith("0".repeat(zeros)) && digest[zeros] !== "0") return `n${i}`;
  }
}

const complete = (c: Issued, session: string, nonce: string) =>
  post("/v1/challenge", { challengeId: c.challengeId, session, proof: { nonce } });

describe("POST /v1/page-tokens with pow", () => {
  it("hands the page a seed of 32 hex characters at the tenant's severe difficulty, as a challenge's instructions give one", async () => {
    const { pow } = await pageLoad();
    expect(pow).toEqual({
      type: "pow",
      seed: expect.stringMatching(/^[0-9a-f]{32}$/),
      difficulty: 6,
      algorithm: "sha256-prefix",
    });
    expect((await pageLoad(raisedKey)).pow.difficulty).toBe(7);
    // Each token its own seed.
    expect((await pageLoad()).pow.seed).not.toBe(pow.seed);
  });

  it("without pow (or with pow false) hands out no proof of work", async () => {
    for (const payload of [{}, { pow: false }, { probe: true }]) {
      const res = await post("/v1/page-tokens", payload);
      expect(res.status).toBe(200);
      expect(res.body.pow).toBeUndefined();
    }
  });

  it("while the tenant's policy cannot be read, still answers, with the documented severe difficulty", async () => {
    await t.tenant("cold");
    const coldKey = (await t.key("cold")).apiKey;
    failing.add("policies");
    try {
      const res = await post("/v1/page-tokens", { pow: true }, coldKey);
      expect(res.status).toBe(200);
      expect(res.body.pow).toMatchObject({ difficulty: 6 });
    } finally {
      failing.clear();
    }
  });
});

describe("a challenge on an attempt that carried a page token", () => {
  it("is sealed with the page's seed, at its own tier's difficulty; the page's answer clears it and the re-verify honours the clear", async () => {
    const page = await pageLoad();
    const eventId = await submit(page, "p-1");
    const c = await issue(eventId, "p-1");
    expect(c.instructions).toEqual({
      type: "pow",
      seed: page.pow.seed,
      difficulty: 4,
      algorithm: "sha256-prefix",
    });
    // What the page found before the submit (here at the sealed difficulty, to keep the test short).
    const { nonce } = solvePow(page.pow.seed, 4);
    const done = await complete(c, "p-1", nonce);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ ok: true });
    const again = await post("/v1/verify", {
      action: "signup",
      session: "p-1",
      subject: { ipTrunc: page.ipTrunc, page: { token: page.token } },
      context: { challengeId: c.challengeId },
    });
    expect(again.body).toMatchObject({ decision: "allow", challengeCleared: true });
  });

  it("keeps the difficulty sealed: a severe challenge on the page's seed refuses an answer of the default tier", async () => {
    const page = await pageLoad();
    const eventId = await submit(page, "p-2");
    const c = await issue(eventId, "p-2", "severe");
    expect(c.instructions).toMatchObject({ seed: page.pow.seed, difficulty: 6 });
    const refused = await complete(c, "p-2", nonceWithExactly(page.pow.seed, 4));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "invalid_challenge_proof" });
  });

  it("issued again after it expired unsolved, is sealed with the same seed (the page's answer still clears it)", async () => {
    const page = await pageLoad();
    const eventId = await submit(page, "p-3");
    const first = await issue(eventId, "p-3");
    now += 3_600_000;
    const expired = await complete(first, "p-3", solvePow(page.pow.seed, 4).nonce);
    expect(expired.status).toBe(410);
    const second = await issue(eventId, "p-3");
    expect(second.instructions.seed).toBe(page.pow.seed);
    expect((await complete(second, "p-3", solvePow(page.pow.seed, 4).nonce)).status).toBe(200);
  });

  it("on a degraded verdict, is sealed with the page's seed too (the token is read without the store)", async () => {
    const page = await pageLoad();
    now += 8_000;
    failing.add("counters.hit");
    const res = await post("/v1/verify", {
      action: "signup",
      session: "p-4",
      subject: { ipTrunc: page.ipTrunc, page: { token: page.token } },
    });
    failing.clear();
    expect(res.body).toMatchObject({ decision: "challenge", degraded: true });
    await t.deps.pendingEvents.flush();
    const c = await issue(res.body.eventId as string, "p-4");
    expect(c.instructions.seed).toBe(page.pow.seed);
  });
});

describe("a challenge on an attempt without a page token", () => {
  it("gets a random seed, as before (an attempt with a token not Warden's, or not this tenant's, is denied: page_token_invalid)", async () => {
    const seeds = new Set<string>();
    for (const i of [0, 1]) {
      now += 8_000;
      const session = `n-${i}`;
      const ipTrunc = `198.19.${i}.0/24`;
      const res = await post("/v1/verify", { action: "signup", session, subject: { ipTrunc } });
      expect(res.body).toMatchObject({ decision: "challenge" });
      const c = await issue(res.body.eventId as string, session);
      expect(c.instructions.seed).toMatch(/^[0-9a-f]{32}$/);
      seeds.add(c.instructions.seed);
      expect((await complete(c, session, solvePow(c.instructions.seed, 4).nonce)).status).toBe(200);
    }
    expect(seeds.size).toBe(2);
  });
});
