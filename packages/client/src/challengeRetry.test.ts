import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solvePow } from "../../server/src/operations/challenge/methods/proofOfWork/proofOfWork.js";
import { makeTestApp, type TestApp } from "../../server/src/testing/harness.js";
import { completionIdempotencyKey, WardenClient } from "./client.js";

/**
 * A completion whose answer is lost (the connection drops after Warden cleared the challenge) and is
 * sent again gets the clear's answer, not 409 challenge_already_solved: the SDK gives a completion an
 * Idempotency-Key made from the completion itself, and Warden replays the completion that cleared.
 */
let warden: TestApp;
let baseUrl: string;
let apiKey: string;

beforeAll(async () => {
  warden = await makeTestApp({ env: { WARDEN_RATE_LIMIT_MAX: "100000" } });
  await warden.tenant("acme");
  ({ apiKey } = await warden.key("acme"));
  baseUrl = await warden.app.listen({ host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  await warden.close();
});

/** A fetch that delivers each completion to Warden but loses the first answer, as a dropped connection does. */
function losingFirstCompletionAnswer(): { fetch: typeof fetch; keys: string[] } {
  const keys: string[] = [];
  let lost = false;
  return {
    keys,
    fetch: async (input, init) => {
      const res = await globalThis.fetch(input, init);
      const body = typeof init?.body === "string" ? (JSON.parse(init.body) as Record<string, unknown>) : {};
      if (body.proof !== undefined) {
        keys.push(new Headers(init?.headers).get("idempotency-key") ?? "");
        if (!lost) {
          lost = true;
          await res.arrayBuffer();
          throw new TypeError("fetch failed: the connection dropped before the answer arrived");
        }
      }
      return res;
    },
  };
}

describe("challenge completions sent again", () => {
  it("the completion sent again after its answer was lost gets the clear's answer (it was 409)", async () => {
    const wire = losingFirstCompletionAnswer();
    const client = new WardenClient({ baseUrl, apiKey, fetch: wire.fetch });
    const verdict = await client.verify({ action: "signup", session: "s-lost", subject: {} });
    expect(verdict.decision).toBe("challenge");
    const eventId = verdict.eventId;
    if (eventId === undefined) throw new Error("no event to challenge");
    const issued = await client.challenge.issue({ eventId, session: "s-lost" });
    if (!issued.ok) throw new Error("issue failed");
    const { seed, difficulty } = issued.value.instructions as { seed: string; difficulty: number };
    const completion = {
      eventId,
      session: "s-lost",
      challengeId: issued.value.challengeId,
      proof: { nonce: solvePow(seed, difficulty).nonce },
    };
    const lost = await client.challenge.complete(completion);
    expect(lost.ok).toBe(false);
    const again = await client.challenge.complete(completion);
    expect(again.ok && again.value).toMatchObject({ ok: true, challengeId: issued.value.challengeId });
    expect(wire.keys).toHaveLength(2);
    expect(wire.keys[0]).toBe(wire.keys[1]);
    expect(wire.keys[0]).toBe(await completionIdempotencyKey(completion));

    // Another completion of the cleared challenge (another proof) is still 409 challenge_already_solved.
    const other = await client.challenge.complete({ ...completion, proof: { nonce: "another" } });
    expect(other.ok).toBe(false);
    expect(!other.ok && other.error?.code).toBe("challenge_already_solved");
    // The re-verify honours the clear once.
    const reverify = await client.verify({
      action: "signup",
      session: "s-lost",
      subject: {},
      context: { challengeId: issued.value.challengeId },
    });
    expect(reverify).toMatchObject({ decision: "allow", challengeCleared: true });
  });

  it("the key is the completion's: the same for the same completion in any key order, another for another proof", async () => {
    const a = await completionIdempotencyKey({
      challengeId: "chl_1",
      session: "s",
      proof: { nonce: "1", method: "proof_of_work" },
    });
    const b = await completionIdempotencyKey({
      proof: { method: "proof_of_work", nonce: "1" },
      session: "s",
      challengeId: "chl_1",
    });
    const c = await completionIdempotencyKey({ challengeId: "chl_1", session: "s", proof: { nonce: "2" } });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(a).toMatch(/^wc1-[0-9a-f]{64}$/);
  });
});
