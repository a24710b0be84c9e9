import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHALLENGE_METHODS, type ChallengeMethod } from "../../../domain.js";
import { bearer, makeTestApp, type TestApp } from "../../../testing/harness.js";
import type { Caller } from "../../caller.js";
import { type ChallengeResult, challenge } from "../challenge.js";
import { type ChallengeDeps, type Method, type Proof, refuse } from "../method.js";
import { ChallengeRequest } from "../schema.js";
import { FLOOR, METHODS } from "./registry.js";

/** The registry is the one list of challenge methods (CONTRIBUTING.md, "Add a challenge method"). */
describe("the challenge method registry", () => {
  it("lists the one Method each folder of methods/ exports, and nothing else", async () => {
    const dir = new URL("./", import.meta.url);
    const folders = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
    const exported = new Map<string, Method[]>();
    for (const folder of folders) {
      const found: Method[] = [];
      const files = fs
        .readdirSync(new URL(`${folder.name}/`, dir))
        .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
      for (const file of files) {
        const mod = (await import(new URL(`${folder.name}/${file}`, dir).href)) as Record<string, unknown>;
        for (const value of Object.values(mod)) {
          const m = value as Partial<Method> | null;
          if (m && typeof m === "object" && typeof m.seal === "function" && typeof m.check === "function") {
            found.push(m as Method);
          }
        }
      }
      exported.set(folder.name, found);
    }
    expect(folders.length).toBeGreaterThanOrEqual(4);
    for (const [folder, found] of exported)
      expect({ folder, count: found.length }).toEqual({ folder, count: 1 });
    expect(new Set([...exported.values()].flat())).toEqual(new Set(METHODS));
    expect(METHODS).toContain(FLOOR);
  });

  it("names each method by the API's closed set, and has a method for each of its names but email_otp", () => {
    const names = METHODS.map((m) => m.name);
    expect(new Set(names).size).toBe(METHODS.length);
    for (const name of names) expect(CHALLENGE_METHODS).toContain(name);
    // The API names email_otp and never issues it: with no method it is never selected (docs/api.md).
    expect(CHALLENGE_METHODS.filter((name) => !names.includes(name))).toEqual(["email_otp"]);
    expect(FLOOR.name).toBe("proof_of_work");
  });

  it("gives each proof name and proof member to one method, and no proof without a name to two", () => {
    const proofNames = METHODS.flatMap((m) => m.proof.names);
    expect(new Set(proofNames).size).toBe(proofNames.length);
    const members = METHODS.flatMap((m) => Object.keys(m.proof.members));
    expect(new Set(members).size).toBe(members.length);
    // Every combination of the members, sent without `method`.
    const ambiguous: { proof: Proof; claimedBy: string[] }[] = [];
    for (let bits = 0; bits < 2 ** members.length; bits++) {
      const proof: Proof = Object.fromEntries(members.filter((_, i) => bits & (1 << i)).map((k) => [k, "x"]));
      const claimedBy = METHODS.filter((m) => m.proof.claimsUnnamed?.(proof)).map((m) => m.name);
      if (claimedBy.length > 1) ambiguous.push({ proof, claimedBy });
    }
    expect(members.length).toBeGreaterThanOrEqual(5);
    expect(ambiguous).toEqual([]);
    // The unnamed forms the API documents.
    const claimant = (proof: Proof) => METHODS.find((m) => m.proof.claimsUnnamed?.(proof))?.name;
    expect(claimant({ nonce: "1" })).toBe("proof_of_work");
    expect(claimant({ headers: {} })).toBe("web_bot_auth_stepup");
    expect(claimant({ headers: {}, nonce: "1" })).toBe("web_bot_auth_stepup");
    expect(claimant({ setupIntentId: "seti_1" })).toBeUndefined();
  });

  it("puts each method's proof members and form in the request schema", () => {
    const proof = ChallengeRequest.properties.proof;
    for (const m of METHODS) {
      for (const [member, schema] of Object.entries(m.proof.members))
        expect(proof.properties[member]).toBe(schema);
      expect(proof.description).toContain(`${m.name}: ${m.proof.form}`);
    }
    expect(Object.keys(proof.properties)).toEqual([
      "method",
      ...METHODS.flatMap((m) => Object.keys(m.proof.members)),
    ]);
  });
});

/**
 * A method the API does not have, registered through the same list: challenge.ts issues, checks and
 * clears it as it does the real ones. A carrier pigeon is issuable for a session named "pigeon-…"; its
 * sealed ring must come back on the bird, and a bird carries one message only.
 */
const carrierPigeon: Method = {
  // A test-only name: the API's set of names is closed (domain.ts).
  name: "carrier_pigeon" as ChallengeMethod,
  proof: { names: ["pigeon"], form: "{ method: pigeon, bird, ring }", members: {} },
  issuable: ({ session }) => session.startsWith("pigeon-"),
  seal: (_issue, challengeId) => ({
    difficulty: null,
    seed: `ring-${challengeId}`,
    instructions: { type: "pigeon", ring: `ring-${challengeId}` },
  }),
  async check({ challenge: c, proof }) {
    if (proof.ring !== c.seed) return refuse("invalid_challenge_proof", "The pigeon carries another ring.");
    return {
      ok: true,
      singleUse: {
        ref: `pigeon:${String(proof.bird)}`,
        reused: refuse("invalid_challenge_proof", "This pigeon already carried a message."),
      },
    };
  },
};

describe("a method registered through the list", () => {
  let t: TestApp;
  let deps: ChallengeDeps;
  let caller: Caller;
  let apiKey: string;

  beforeAll(async () => {
    t = await makeTestApp();
    await t.tenant("acme");
    apiKey = (await t.key("acme")).apiKey;
    const [tenant, [key]] = await Promise.all([t.store.tenants.get("acme"), t.store.apiKeys.list("acme")]);
    if (!tenant || !key) throw new Error("the tenant and its key were just made");
    caller = { tenant, key };
    deps = {
      store: t.deps.store,
      clock: t.deps.clock,
      ttlMs: 300_000,
      payment: { apiBase: t.deps.config.paymentApiBase, timeoutMs: t.deps.config.paymentTimeoutMs },
      tenantPolicies: t.deps.tenantPolicies,
      agentKeys: t.deps.agents.lookup,
      signatureSkewSeconds: t.deps.model.signatureSkewSeconds,
      methods: [...METHODS, carrierPigeon],
    };
  });
  afterAll(() => t.close());

  /** A challenged event for the session: thin evidence, so the verdict is challenge. */
  async function challengedEvent(session: string): Promise<string> {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: { action: "signup", session, subject: {} },
    });
    const verdict = res.json() as { decision: string; eventId: string };
    expect(verdict.decision).toBe("challenge");
    return verdict.eventId;
  }

  const issued = (result: ChallengeResult) => {
    if (!result.ok) throw new Error(`not issued: ${result.code}`);
    return result.challenge;
  };

  it("is issued when preferred and issuable, and cleared by its own check", async () => {
    const session = "pigeon-1";
    const eventId = await challengedEvent(session);
    const c = issued(await challenge(deps, caller, { eventId, session, prefer: ["carrier_pigeon"] }));
    expect(c).toMatchObject({ method: "carrier_pigeon", boundTo: session });
    expect(c.instructions).toEqual({ type: "pigeon", ring: `ring-${c.challengeId}` });

    const complete = (proof: Record<string, unknown>) =>
      challenge(deps, caller, { challengeId: c.challengeId, session, proof });
    expect(await complete({ nonce: "1" })).toEqual({ ok: false, code: "challenge_method_mismatch" });
    expect(await complete({ method: "pigeon", bird: "b1", ring: "ring-other" })).toEqual({
      ok: false,
      code: "invalid_challenge_proof",
      message: "The pigeon carries another ring.",
    });
    const cleared = await complete({ method: "pigeon", bird: "b1", ring: c.instructions.ring });
    expect(cleared).toMatchObject({ ok: true, challenge: { method: "carrier_pigeon", ok: true } });
    expect(await complete({ method: "pigeon", bird: "b1", ring: c.instructions.ring })).toEqual({
      ok: false,
      code: "challenge_already_solved",
    });

    // Its proof clears one challenge only: the same bird on another is the method's own refusal.
    const again = issued(await challenge(deps, caller, { eventId, session, prefer: ["carrier_pigeon"] }));
    expect(
      await challenge(deps, caller, {
        challengeId: again.challengeId,
        session,
        proof: { method: "pigeon", bird: "b1", ring: again.instructions.ring },
      }),
    ).toEqual({
      ok: false,
      code: "invalid_challenge_proof",
      message: "This pigeon already carried a message.",
    });
  });

  it("is not issued where it is not issuable, nor when not preferred: the floor is", async () => {
    const session = "sparrow-1";
    const eventId = await challengedEvent(session);
    const notIssuable = issued(
      await challenge(deps, caller, { eventId, session, prefer: ["carrier_pigeon"] }),
    );
    expect(notIssuable.method).toBe("proof_of_work");
    const pigeonSession = "pigeon-2";
    const other = await challengedEvent(pigeonSession);
    const notPreferred = issued(await challenge(deps, caller, { eventId: other, session: pigeonSession }));
    expect(notPreferred.method).toBe("proof_of_work");
  });

  it("is unknown to the app, whose list does not hold it", async () => {
    const session = "pigeon-3";
    const eventId = await challengedEvent(session);
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/challenge",
      headers: bearer(apiKey),
      payload: { eventId, session, prefer: ["carrier_pigeon"] },
    });
    expect(res.json()).toMatchObject({ method: "proof_of_work" });
  });
});
