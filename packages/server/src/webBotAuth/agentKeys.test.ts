import { constants, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAgentJwks, signatureCheckFor } from "./agentKeys.js";

const ed = generateKeyPairSync("ed25519");
const edJwk = ed.publicKey.export({ format: "jwk" });
const edCheck = signatureCheckFor(edJwk, "ed25519");

describe("Ed25519 signature check (libsodium)", () => {
  const base = Buffer.from('"@authority": example.com\n"@signature-params": ("@authority");created=1');
  const good = sign(null, base, ed.privateKey);

  it("accepts the signer's signature and refuses another message", () => {
    expect(edCheck(base, good)).toBe(true);
    expect(edCheck(Buffer.concat([base, Buffer.from(" ")]), good)).toBe(false);
  });

  it("refuses a valid signature with bytes appended (libsodium alone reads only the first 64)", () => {
    expect(edCheck(base, Buffer.concat([good, Buffer.from([0])]))).toBe(false);
  });

  it("refuses short and empty signatures without throwing", () => {
    expect(edCheck(base, good.subarray(0, 63))).toBe(false);
    expect(edCheck(base, Buffer.alloc(0))).toBe(false);
  });

  it("agrees with OpenSSL on genuine, altered and random signatures", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 300 }),
        fc.nat(63),
        fc.boolean(),
        (message, flipAt, flip) => {
          const data = Buffer.from(message);
          const sig = Buffer.from(sign(null, data, ed.privateKey));
          if (flip) sig[flipAt] = (sig[flipAt] as number) ^ 1;
          const random = randomBytes(64);
          expect(edCheck(data, sig)).toBe(verify(null, data, ed.publicKey, sig));
          expect(edCheck(data, random)).toBe(verify(null, data, ed.publicKey, random));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses the universal forgery under a small-order public key, which OpenSSL accepts", async () => {
    // The identity point as public key with R = identity, S = 0 verifies for every message under
    // RFC 8032's equation; libsodium refuses small-order keys.
    const identity = Buffer.alloc(32);
    identity[0] = 1;
    const jwk = { kty: "OKP", crv: "Ed25519", x: identity.toString("base64url") };
    const forgery = Buffer.concat([identity, Buffer.alloc(32)]);
    const message = Buffer.from("anything at all");
    expect(verify(null, message, createPublicKey({ key: jwk, format: "jwk" }), forgery)).toBe(true);
    const parsed = await parseAgentJwks({ keys: [jwk] });
    expect(parsed.ok).toBe(true);
    expect(signatureCheckFor(jwk, "ed25519")(message, forgery)).toBe(false);
  });
});

describe("RSA-PSS-SHA512 signature check", () => {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const check = signatureCheckFor(rsa.publicKey.export({ format: "jwk" }), "rsa-pss-sha512");
  const base = Buffer.from("signature base");
  const pss = { key: rsa.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 };

  it("accepts PSS with a 64-byte salt over SHA-512", () => {
    expect(check(base, sign("sha512", base, pss))).toBe(true);
  });

  it("refuses PKCS#1 v1.5, another digest, and garbage without throwing", () => {
    expect(check(base, sign("sha512", base, rsa.privateKey))).toBe(false);
    expect(check(base, sign("sha256", base, pss))).toBe(false);
    expect(check(base, Buffer.from("nope"))).toBe(false);
  });
});

describe("signatureCheckFor", () => {
  it("throws for a key that is not what the algorithm needs", () => {
    expect(() => signatureCheckFor({ kty: "OKP", crv: "Ed25519", x: "AAAA" }, "ed25519")).toThrow();
    expect(() => signatureCheckFor(edJwk, "rsa-pss-sha512")).toThrow(/rsa-pss-sha512/);
  });
});
