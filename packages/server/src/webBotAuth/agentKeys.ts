import { constants, createPublicKey, type KeyObject, verify as verifyBytes } from "node:crypto";
import { calculateJwkThumbprint, type JWK } from "jose";
import sodium from "sodium-native";
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
      signatureCheckFor(publicJwk, alg);
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

function publicKeyOf(jwk: JWK | Record<string, unknown>): KeyObject {
  return createPublicKey({ key: jwk as import("node:crypto").JsonWebKey, format: "jwk" });
}

/** Checks signature bytes over a signature base with one registered key. */
export type SignatureCheck = (base: Buffer, signature: Buffer) => boolean;

/**
 * The check for a public JWK that parseAgentJwks accepted (it throws on any other). Ed25519 goes to
 * libsodium (sodium-native): on this project's machines its verification takes about 60% of OpenSSL's
 * time, and it is stricter (it refuses small-order keys and non-canonical encodings). RSA-PSS-SHA512
 * stays with node:crypto, salt length 64 as Web Bot Auth signs it.
 */
export function signatureCheckFor(
  jwk: JWK | Record<string, unknown>,
  alg: SignatureAlgorithm,
): SignatureCheck {
  const key = publicKeyOf(jwk);
  if (key.asymmetricKeyType !== (alg === "ed25519" ? "ed25519" : "rsa")) {
    throw new Error(`not an ${alg} public key`);
  }
  if (alg === "ed25519") {
    const raw = Buffer.from(key.export({ format: "jwk" }).x ?? "", "base64url");
    if (raw.length !== sodium.crypto_sign_PUBLICKEYBYTES) throw new Error("not an Ed25519 public key");
    // libsodium reads only the first 64 bytes: anything longer or shorter is not a signature.
    return (base, signature) =>
      signature.length === sodium.crypto_sign_BYTES &&
      sodium.crypto_sign_verify_detached(signature, base, raw);
  }
  const rsa = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 };
  return (base, signature) => {
    try {
      return verifyBytes("sha512", base, rsa, signature);
    } catch {
      return false;
    }
  };
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
