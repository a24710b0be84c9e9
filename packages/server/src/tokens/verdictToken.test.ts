import { generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { decodeProtectedHeader, importJWK, type JWK, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { newSigningKey, signerKey } from "./signingKeys.js";
import { signVerdictToken, signVerdictTokenOffThread, type VerdictClaims } from "./verdictToken.js";

const settings = { issuer: "https://warden.test", audience: "warden-verdict", ttlSeconds: 300 };

const claimsArb: fc.Arbitrary<VerdictClaims> = fc.record(
  {
    tenantId: fc.string({ minLength: 1, maxLength: 40 }),
    eventId: fc.string({ minLength: 1, maxLength: 40 }),
    session: fc.option(fc.string({ unit: "binary", maxLength: 60 }), { nil: null }),
    action: fc.string({ unit: "binary", minLength: 1, maxLength: 60 }),
    decision: fc.constantFrom("allow", "challenge", "deny"),
    actorType: fc.constantFrom("human", "agent_principal", "agent_abusive", "unknown"),
    degraded: fc.boolean(),
    challengeCleared: fc.constant(true as const),
  },
  { requiredKeys: ["tenantId", "eventId", "session", "action", "decision", "actorType", "degraded"] },
);

describe("verdict tokens (ES256 signed with node:crypto, verified with jose)", () => {
  it("every token, signed on the event loop or on the thread pool, verifies against the published key and carries exactly its claims", async () => {
    const record = await newSigningKey(Date.now());
    const signer = { kid: record.kid, key: signerKey(record.privateJwk) };
    const publicKey = await importJWK(JSON.parse(record.publicJwk) as JWK, "ES256");
    const nowMs = Date.now();
    await fc.assert(
      fc.asyncProperty(claimsArb, fc.boolean(), async (claims, offThread) => {
        const token = offThread
          ? await signVerdictTokenOffThread(signer, settings, claims, nowMs)
          : signVerdictToken(signer, settings, claims, nowMs);
        expect(decodeProtectedHeader(token)).toEqual({ alg: "ES256", kid: record.kid, typ: "JWT" });
        // ES256 signatures are R || S, 64 bytes (RFC 7518 §3.4), not DER.
        expect(Buffer.from(token.split(".")[2] as string, "base64url")).toHaveLength(64);
        const { payload } = await jwtVerify(token, publicKey, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: ["ES256"],
          currentDate: new Date(nowMs),
        });
        const iat = Math.floor(nowMs / 1000);
        expect(payload).toEqual({
          tid: claims.tenantId,
          decision: claims.decision,
          actorType: claims.actorType,
          degraded: claims.degraded,
          action: claims.action,
          ...(claims.challengeCleared ? { challengeCleared: true } : {}),
          iss: settings.issuer,
          aud: settings.audience,
          sub: claims.session ?? claims.eventId,
          jti: claims.eventId,
          iat,
          exp: iat + settings.ttlSeconds,
        });
      }),
      { numRuns: 200 },
    );
  });

  it("a token whose payload was altered does not verify", async () => {
    const record = await newSigningKey(Date.now());
    const signer = { kid: record.kid, key: signerKey(record.privateJwk) };
    const publicKey = await importJWK(JSON.parse(record.publicJwk) as JWK, "ES256");
    const token = signVerdictToken(
      signer,
      settings,
      {
        tenantId: "acme",
        eventId: "evt_1",
        session: null,
        action: "signup",
        decision: "deny",
        actorType: "agent_abusive",
        degraded: false,
      },
      Date.now(),
    );
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const altered = Buffer.from(
      Buffer.from(payload, "base64url").toString().replace('"deny"', '"allow"'),
    ).toString("base64url");
    await expect(jwtVerify(`${header}.${altered}.${signature}`, publicKey)).rejects.toThrow();
    // Another key's signature over the same input does not verify either.
    const other = await newSigningKey(Date.now());
    const forged = signVerdictToken(
      { kid: record.kid, key: signerKey(other.privateJwk) },
      settings,
      {
        tenantId: "acme",
        eventId: "evt_1",
        session: null,
        action: "signup",
        decision: "allow",
        actorType: "human",
        degraded: false,
      },
      Date.now(),
    );
    await expect(jwtVerify(forged, publicKey)).rejects.toThrow();
  });

  it("a stored key that is not EC P-256 is refused as a signing key", () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-384" });
    expect(() => signerKey(JSON.stringify(privateKey.export({ format: "jwk" })))).toThrow(/P-256/);
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    expect(() => signerKey(JSON.stringify(rsa.export({ format: "jwk" })))).toThrow(/P-256/);
  });
});
