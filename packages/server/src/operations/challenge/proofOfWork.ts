import { createHash, randomBytes } from "node:crypto";

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
