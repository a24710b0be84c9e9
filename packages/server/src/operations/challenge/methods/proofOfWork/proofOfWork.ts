import { createHash, randomBytes } from "node:crypto";
import { Type } from "@sinclair/typebox";
import type { EventRecord } from "../../../../domain.js";
import { type Method, refuse } from "../../method.js";

/**
 * Proof of work, "sha256-prefix": a nonce solves a challenge when the lowercase hex SHA-256 of the
 * UTF-8 string seed + nonce begins with `difficulty` "0" characters (each one is 4 bits of work).
 */
export const POW_ALGORITHM = "sha256-prefix";
export const MAX_NONCE_LENGTH = 64;

/** A seed of 128 random bits, hex. */
export function newSeed(): string {
  return randomBytes(16).toString("hex");
}

export function powDigest(seed: string, nonce: string): string {
  return createHash("sha256")
    .update(seed + nonce, "utf8")
    .digest("hex");
}

export function solvesPow(seed: string, nonce: string, difficulty: number): boolean {
  if (nonce.length === 0 || nonce.length > MAX_NONCE_LENGTH) return false;
  return powDigest(seed, nonce).startsWith("0".repeat(difficulty));
}

/** The reference solver: counts up from 0 in base 36. Expected work: 16^difficulty hashes. */
export function solvePow(seed: string, difficulty: number): { nonce: string; attempts: number } {
  const prefix = "0".repeat(difficulty);
  for (let i = 0; ; i++) {
    const nonce = i.toString(36);
    if (powDigest(seed, nonce).startsWith(prefix)) return { nonce, attempts: i + 1 };
  }
}

/** The proof reference of a solved seed: each seed clears one challenge (store: proof_ref, unique). */
export const powProofRef = (seed: string): string => `pow:${seed}`;

/**
 * The seed the attempt's page was handed with its page token (tokens/pageToken.ts powSeed), as verify
 * recorded it with the event (evidence.ts), when it carried a valid one.
 */
export function pageSeedOf(event: Pick<EventRecord, "signals">): string | undefined {
  const page = event.signals.page as { powSeed?: unknown } | string | null | undefined;
  const seed = typeof page === "object" && page !== null ? page.powSeed : undefined;
  return typeof seed === "string" && /^[0-9a-f]{32}$/.test(seed) ? seed : undefined;
}

/**
 * proof_of_work, the floor (methods/registry.ts): issuable for every tenant and event. Its difficulty
 * is the tenant's for the tier sealed (never below the documented 4/5/6), and completion checks that
 * sealed difficulty, never a current tier or policy.
 *
 * Its seed is the one the attempt's page was handed with its page token, so that the page's
 * background search (@warden/browser watchPage) has the answer ready when the person submits; an
 * attempt without a page token, or whose page's seed already cleared a challenge, gets 128 random
 * bits. A seed clears one challenge, whatever the nonce (its proof reference is unique in the store,
 * checked by the clearing update itself): one page token's answer never clears two attempts, and two
 * challenges sealed with one seed (issued before either cleared) are cleared by one solve at most.
 */
export const proofOfWorkMethod: Method = {
  name: "proof_of_work",
  proof: {
    names: ["proof_of_work"],
    // The documented bare form { nonce }; a bare proof with headers is a signed request's (step-up).
    claimsUnnamed: (proof) => proof.nonce !== undefined && proof.headers === undefined,
    form: "{ nonce } (at most 64 characters)",
    members: { nonce: Type.Optional(Type.String()) },
  },
  issuable: () => true,
  async seal({ deps, tenantId, event, tier, policy }) {
    const difficulty = policy.powDifficulty[tier];
    const page = pageSeedOf(event);
    const seed =
      page !== undefined && !(await deps.store.challenges.proofUsed(tenantId, powProofRef(page)))
        ? page
        : newSeed();
    return { difficulty, seed, instructions: { type: "pow", difficulty, seed, algorithm: POW_ALGORITHM } };
  },
  async check({ challenge: c, proof }) {
    const nonce = typeof proof.nonce === "string" ? proof.nonce : "";
    if (c.seed === null || c.difficulty === null || !solvesPow(c.seed, nonce, c.difficulty)) {
      return refuse("invalid_challenge_proof");
    }
    return {
      ok: true,
      singleUse: {
        ref: powProofRef(c.seed),
        reused: refuse(
          "invalid_challenge_proof",
          "This seed's proof of work already cleared another challenge; issue a fresh challenge.",
        ),
      },
    };
  },
};
