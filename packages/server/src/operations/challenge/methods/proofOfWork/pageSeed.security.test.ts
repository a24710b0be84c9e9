import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, makeTestApp, type TestApp } from "../../../../testing/harness.js";
import { derivePageKey, powSeed } from "../../../../tokens/pageToken.js";
import { powDigest, solvePow } from "./proofOfWork.js";

/**
 * A page's proof of work as an attacker would use it (docs/security-model.md, invariant 15): the seed
 * a page is handed is keyed (nobody computes it from the token), and an answer to it clears one
 * challenge. A page token may serve several attempts (retries, or a script reusing it under the
 * velocity limit): the first clear spends the seed, every later challenge on any of them is sealed
 * with a random seed, and of two challenges sealed with one seed before either cleared, one clears.
 */

let t: TestApp;
let now = Date.parse("2026-12-03T12:00:00.000Z");
let key: string;

beforeAll(async () => {
  t = await makeTestApp({ clock: () => now, env: { WARDEN_RATE_LIMIT_MAX: "1000000" } });
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

type Json = Record<string, unknown>;
const post = async (url: string, payload: Json) => {
  const res = await t.app.inject({ method: "POST", url, headers: bearer(key), payload });
  return { status: res.statusCode, body: res.json() as Json };
};
interface Issued {
  challengeId: string;
  instructions: { seed: string; difficulty: number };
}

let networks = 0;
async function pageLoad() {
  const ipTrunc = `198.18.${++networks}.0/24`;
  const res = await post("/v1/page-tokens", { subject: { ipTrunc }, pow: true });
  expect(res.status).toBe(200);
  return { ipTrunc, token: res.body.pageToken as string, seed: (res.body.pow as { seed: string }).seed };
}
/** An attempt (its own session) sent with `page`'s token, challenged, and a challenge issued on it. */
async function challengedWith(page: { ipTrunc: string; token: string }, session: string): Promise<Issued> {
  now += 8_000;
  const verdict = await post("/v1/verify", {
    action: "signup",
    session,
    subject: { ipTrunc: page.ipTrunc, page: { token: page.token } },
  });
  expect(verdict.body).toMatchObject({ decision: "challenge" });
  await t.deps.pendingEvents.flush();
  const issued = await post("/v1/challenge", { eventId: verdict.body.eventId, session });
  expect(issued.status).toBe(200);
  return issued.body as unknown as Issued;
}
const complete = (c: Issued, session: string, nonce: string) =>
  post("/v1/challenge", { challengeId: c.challengeId, session, proof: { nonce } });

/** The `n`-th nonce (from 0) that solves `seed` at `difficulty`: distinct answers to one seed. */
function nthAnswer(seed: string, difficulty: number, n: number): string {
  const prefix = "0".repeat(difficulty);
  for (let i = 0, found = 0; ; i++) {
    if (powDigest(seed, `a${i}`).startsWith(prefix) && found++ === n) return `a${i}`;
  }
}

describe("a page's proof of work clears one challenge", () => {
  it("once its answer cleared an attempt's challenge, another attempt with the same page token is sealed with a random seed", async () => {
    const page = await pageLoad();
    const first = await challengedWith(page, "a-1");
    expect(first.instructions.seed).toBe(page.seed);
    const answer = solvePow(page.seed, 4).nonce;
    expect((await complete(first, "a-1", answer)).status).toBe(200);

    const second = await challengedWith(page, "a-2");
    expect(second.instructions.seed).not.toBe(page.seed);
    expect(second.instructions.seed).toMatch(/^[0-9a-f]{32}$/);
    // The precomputed answer is no answer to it; a fresh search is.
    expect((await complete(second, "a-2", answer)).body).toMatchObject({ code: "invalid_challenge_proof" });
    expect((await complete(second, "a-2", solvePow(second.instructions.seed, 4).nonce)).status).toBe(200);
  });

  it("two challenges sealed with one page's seed before either cleared: the first clear spends the seed, and no answer to it (the same or another) clears the second, which stays issued", async () => {
    const page = await pageLoad();
    const one = await challengedWith(page, "b-1");
    const two = await challengedWith(page, "b-2");
    expect([one.instructions.seed, two.instructions.seed]).toEqual([page.seed, page.seed]);
    expect((await complete(one, "b-1", nthAnswer(page.seed, 4, 0))).status).toBe(200);
    for (const n of [0, 1]) {
      const refused = await complete(two, "b-2", nthAnswer(page.seed, 4, n));
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: "invalid_challenge_proof" });
    }
    // Stays issued (a refused completion changes nothing), and a fresh challenge on its event gets a
    // random seed, which clears.
    const stored = await t.store.challenges.get("acme", two.challengeId);
    expect(stored?.clearedAt).toBeNull();
    const eventId = stored?.eventId as string;
    const fresh = (await post("/v1/challenge", { eventId, session: "b-2" })).body as unknown as Issued;
    expect(fresh.instructions.seed).not.toBe(page.seed);
    expect((await complete(fresh, "b-2", solvePow(fresh.instructions.seed, 4).nonce)).status).toBe(200);
  });

  it("of concurrent completions of two challenges sharing a page's seed, each with its own answer, exactly one clears", async () => {
    const page = await pageLoad();
    const one = await challengedWith(page, "c-1");
    const two = await challengedWith(page, "c-2");
    const answers = await Promise.all([
      complete(one, "c-1", nthAnswer(page.seed, 4, 0)),
      complete(two, "c-2", nthAnswer(page.seed, 4, 1)),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
  });
});

describe("a page's seed is keyed", () => {
  it("is the HMAC of the token's nonce under the page-token key of its signing key: nothing in the token gives it", async () => {
    const res = await post("/v1/page-tokens", { pow: true });
    const token = res.body.pageToken as string;
    const seed = (res.body.pow as { seed: string }).seed;
    const [, kid = "", payload = ""] = token.split(".");
    const { n: nonce } = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { n: string };
    const pageKey = t.deps.keyring.pageKey(kid);
    if (!pageKey) throw new Error(`no page-token key for ${kid}`);
    expect(seed).toBe(powSeed(pageKey, nonce));
    // Not one of another key, and nowhere in the token the page carries.
    expect(powSeed(derivePageKey(Buffer.alloc(32, 1).toString("base64url"), kid), nonce)).not.toBe(seed);
    expect(token).not.toContain(seed);
    expect(Buffer.from(payload, "base64url").toString("utf8")).not.toContain(seed);
  });
});
