import { createPublicKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, type JWK } from "jose";
import type { AgentKeyRecord } from "../store/interfaces.js";
import type { SignatureAlgorithm } from "./messageSignature.js";

const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k"] as const;

/** Parsed keys come out in the form the registry stores (public JWK, thumbprint = keyid, algorithm). */
export type ParsedJwks = { ok: true; keys: AgentKeyRecord[] } | { ok: false; message: string };

/**
 * Reads a JWKS (`{"keys":[…]}`, the form of a key directory) into agent keys. Only Ed25519 (OKP) and
 * RSA keys are accepted, Web Bot Auth's two algorithms; RSA keys verify as RSA-PSS-SHA512. A file
 * that carries private members is refused rather than trimmed: it should never have left its owner.
 */
export async function parseAgentJwks(input: unknown): Promise<ParsedJwks> {
  const keys = (input as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    return { ok: false, message: 'expected a JWK set: {"keys": [ … ]} with at least one key' };
  }
  const out: AgentKeyRecord[] = [];
  for (const [i, raw] of keys.entries()) {
    if (typeof raw !== "object" || raw === null) return { ok: false, message: `keys[${i}] is not an object` };
    const jwk = raw as JWK;
    if (PRIVATE_MEMBERS.some((m) => m in jwk)) {
      return { ok: false, message: `keys[${i}] holds private key material; give the public key only` };
    }
    let alg: SignatureAlgorithm;
    let publicJwk: JWK;
    if (jwk.kty === "OKP" && jwk.crv === "Ed25519" && typeof jwk.x === "string") {
      alg = "ed25519";
      publicJwk = { kty: "OKP", crv: "Ed25519", x: jwk.x };
    } else if (jwk.kty === "RSA" && typeof jwk.n === "string" && typeof jwk.e === "string") {
      alg = "rsa-pss-sha512";
      publicJwk = { kty: "RSA", n: jwk.n, e: jwk.e };
    } else {
      return { ok: false, message: `keys[${i}] is neither an Ed25519 (OKP) nor an RSA public key` };
    }
    try {
      publicKeyOf(publicJwk);
    } catch {
      return { ok: false, message: `keys[${i}] is not a valid ${alg} public key` };
    }
    out.push({
      thumbprint: await calculateJwkThumbprint(publicJwk, "sha256"),
      alg,
      jwk: publicJwk as Record<string, unknown>,
    });
  }
  return { ok: true, keys: out };
}

export function publicKeyOf(jwk: JWK | Record<string, unknown>): KeyObject {
  return createPublicKey({ key: jwk as import("node:crypto").JsonWebKey, format: "jwk" });
}

/** Signature-Agent values and registered URLs compare by origin (scheme, host, port), lower-cased. */
export function agentOrigin(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== "https:" && u.protocol !== "http:") return undefined;
    return u.origin.toLowerCase();
  } catch {
    return undefined;
  }
}
