import {
  createHash,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { describe, expect, it } from "vitest";
import { compilePolicy, type DeviceAttestationSettings } from "../../../../policy/tenantPolicy.js";
import { checkDeviceAttestation, deviceAttestationChallenge } from "./deviceAttestation.js";

/**
 * A software authenticator, as a bot farm would run one: a P-256 key made in this process, its
 * registration "attested" by itself, either with no certificate (packed self-attestation, signed
 * with the credential key) or with an attestation key whose certificate it signed itself (packed or
 * fido-u2f with x5c). With attestation "none" it proves possession of the key; with "direct" it
 * must be refused, or "direct" costs a farm nothing more than "none". The same authenticator whose
 * attestation certificate is issued by a root the tenant's policy names is accepted: the chain to
 * the tenant's trust anchor is what decides.
 */
const ORIGIN = "http://localhost:8080";
const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();
const p256 = () => generateKeyPairSync("ec", { namedCurve: "P-256" });

/** Just enough DER (X.690) for X.509 v3 certificates signed with ECDSA P-256 and SHA-256. */
const tlv = (tag: number, ...parts: Uint8Array[]) => {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
};
const seq = (...parts: Uint8Array[]) => tlv(0x30, ...parts);
function oid(dotted: string) {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const groups = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}
/** The subject a packed attestation certificate must have (WebAuthn §8.2.1): C, O, OU, CN. */
const name = (cn: string) =>
  seq(
    ...(
      [
        ["2.5.4.6", "US", 0x13],
        ["2.5.4.10", "Bot Farm Ltd", 0x0c],
        ["2.5.4.11", "Authenticator Attestation", 0x0c],
        ["2.5.4.3", cn, 0x0c],
      ] as const
    ).map(([type, value, tag]) => tlv(0x31, seq(oid(type), tlv(tag, Buffer.from(value))))),
  );
const utcTime = (d: Date) => tlv(0x17, Buffer.from(`${d.toISOString().slice(2, 19).replace(/[-:T]/g, "")}Z`));
const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));
const DAY = 86_400_000;

interface Issued {
  cn: string;
  keys: { privateKey: KeyObject; publicKey: KeyObject };
  der: Buffer;
}

/** A certificate for `cn`, signed by `issuer` (itself when absent: self-signed). */
function certificate(cn: string, opts: { issuer?: Issued; ca?: boolean } = {}): Issued {
  const keys = p256();
  const basicConstraints = seq(opts.ca ? tlv(0x01, Buffer.from([0xff])) : Buffer.alloc(0));
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, Buffer.concat([Buffer.from([0x01]), randomBytes(8)])),
    ECDSA_SHA256,
    name(opts.issuer?.cn ?? cn),
    seq(utcTime(new Date(Date.now() - DAY)), utcTime(new Date(Date.now() + 365 * DAY))),
    name(cn),
    keys.publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, seq(seq(oid("2.5.29.19"), tlv(0x01, Buffer.from([0xff])), tlv(0x04, basicConstraints)))),
  );
  const signature = sign("sha256", tbs, opts.issuer?.keys.privateKey ?? keys.privateKey);
  return { cn, keys, der: seq(tbs, ECDSA_SHA256, tlv(0x03, Buffer.from([0]), signature)) };
}
const pem = (c: Issued) => new X509Certificate(c.der).toString();

/** What the authenticator attests with: nothing but the credential key, or a key and its x5c. */
type Statement =
  | { fmt: "packed" }
  | { fmt: "packed" | "fido-u2f"; attestation: Issued; chain: readonly Issued[] };

function softwareAuthenticator() {
  const { privateKey, publicKey } = p256();
  const jwk = publicKey.export({ format: "jwk" });
  const x = Buffer.from(jwk.x as string, "base64url");
  const y = Buffer.from(jwk.y as string, "base64url");
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, x],
      [-3, y],
    ]),
  );
  return { privateKey, cose, raw: Buffer.concat([Buffer.from([0x04]), x, y]), id: randomBytes(16) };
}

/** The attestation statement over the registration (WebAuthn §8.2 packed, §8.6 fido-u2f). */
function attStmt(
  s: Statement,
  a: ReturnType<typeof softwareAuthenticator>,
  authData: Buffer,
  clientData: Buffer,
): Map<string, unknown> {
  if (!("attestation" in s))
    return new Map<string, unknown>([
      ["alg", -7],
      ["sig", new Uint8Array(signed(a.privateKey, authData, clientData))],
    ]);
  const x5c = [s.attestation, ...s.chain].map((c) => new Uint8Array(c.der));
  const key = s.attestation.keys.privateKey;
  if (s.fmt === "packed")
    return new Map<string, unknown>([
      ["alg", -7],
      ["sig", new Uint8Array(signed(key, authData, clientData))],
      ["x5c", x5c],
    ]);
  const rpIdHash = authData.subarray(0, 32);
  const u2f = Buffer.concat([Buffer.from([0x00]), rpIdHash, sha256(clientData), a.id, a.raw]);
  return new Map<string, unknown>([
    ["sig", new Uint8Array(sign("sha256", u2f, key))],
    ["x5c", x5c],
  ]);
}

const signed = (key: KeyObject, authData: Buffer, clientData: Buffer) =>
  sign("sha256", Buffer.concat([authData, sha256(clientData)]), key);

function ceremonies(instructions: Record<string, unknown>, statement: Statement) {
  const create = instructions.creationOptions as { challenge: string };
  const get = instructions.requestOptions as { challenge: string };
  const a = softwareAuthenticator();
  const rpIdHash = sha256("localhost");
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(a.id.length);
  const regAuthData = Buffer.concat([
    rpIdHash,
    Buffer.from([0x41]), // user present, attested credential data
    Buffer.alloc(4),
    Buffer.alloc(16), // AAGUID (zero, as fido-u2f requires)
    idLength,
    a.id,
    Buffer.from(a.cose),
  ]);
  const regClient = Buffer.from(
    JSON.stringify({
      type: "webauthn.create",
      challenge: create.challenge,
      origin: ORIGIN,
      crossOrigin: false,
    }),
  );
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ["fmt", statement.fmt],
      ["attStmt", attStmt(statement, a, regAuthData, regClient)],
      ["authData", new Uint8Array(regAuthData)],
    ]) as never,
  );
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(1);
  const getAuthData = Buffer.concat([rpIdHash, Buffer.from([0x01]), counter]);
  const getClient = Buffer.from(
    JSON.stringify({ type: "webauthn.get", challenge: get.challenge, origin: ORIGIN, crossOrigin: false }),
  );
  const id = b64url(a.id);
  return {
    registration: {
      id,
      rawId: id,
      type: "public-key",
      response: { clientDataJSON: b64url(regClient), attestationObject: b64url(attestationObject) },
      clientExtensionResults: {},
    },
    assertion: {
      id,
      rawId: id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(getClient),
        authenticatorData: b64url(getAuthData),
        signature: b64url(signed(a.privateKey, getAuthData, getClient)),
      },
      clientExtensionResults: {},
    },
  };
}

/** The tenant's settings as its policy document compiles them (trust anchors as PEM strings). */
function settingsFor(attestation: "none" | "direct", trustAnchors?: string[]): DeviceAttestationSettings {
  const deviceAttestation = { rpId: "localhost", origins: [ORIGIN], attestation, trustAnchors };
  const compiled = compilePolicy({ challenge: { deviceAttestation } }, "v1");
  if (!compiled.ok || !compiled.policy.deviceAttestation) throw new Error(JSON.stringify(compiled));
  return compiled.policy.deviceAttestation;
}

const check = async (settings: DeviceAttestationSettings, statement: Statement) => {
  const sealed = deviceAttestationChallenge("chl_self", "s-self", settings, 60_000);
  const c = { id: "chl_self", session: "s-self", seed: sealed.seed };
  const result = await checkDeviceAttestation(ceremonies(sealed.instructions, statement), c, settings);
  return result.ok ? { ok: true as const } : { ok: false as const, why: result.why };
};

describe("device_attestation against a software authenticator's self-attestation", () => {
  const root = certificate("Vendor Root CA", { ca: true });
  const anchored = settingsFor("direct", [pem(root)]);

  it('with attestation "none", the key it holds is proof enough (possession)', async () => {
    expect(await check(settingsFor("none"), { fmt: "packed" })).toEqual({ ok: true });
  });

  it('with attestation "direct", a statement signed by the credential key itself is refused', async () => {
    const refused = await check(anchored, { fmt: "packed" });
    expect(refused.ok).toBe(false);
    expect(refused.why).toMatch(/self-attestation/);
  });

  for (const fmt of ["fido-u2f", "packed"] as const) {
    it(`with attestation "direct", a ${fmt} statement whose x5c certificate is self-signed is refused`, async () => {
      const selfSigned = certificate("Farm Key");
      const refused = await check(anchored, { fmt, attestation: selfSigned, chain: [] });
      expect(refused).toEqual({
        ok: false,
        why: "the attestation certificate does not chain to a trust anchor in the tenant's policy",
      });
      // Appending the tenant's root to x5c does not make the self-signed certificate chain to it.
      const dressed = await check(anchored, { fmt, attestation: selfSigned, chain: [root] });
      expect(dressed.why).toMatch(/not issued by the next one/);
    });

    it(`with attestation "direct", the same ${fmt} statement is accepted when its certificate is issued by a root in the tenant's policy`, async () => {
      const issued = certificate("Vendor Key", { issuer: root });
      expect(await check(anchored, { fmt, attestation: issued, chain: [] })).toEqual({ ok: true });
    });
  }

  it("a chain through an intermediate the statement carries reaches the root; without the intermediate it does not", async () => {
    const intermediate = certificate("Vendor Intermediate CA", { issuer: root, ca: true });
    const issued = certificate("Vendor Key", { issuer: intermediate });
    const statement = { fmt: "packed", attestation: issued } as const;
    expect(await check(anchored, { ...statement, chain: [intermediate] })).toEqual({ ok: true });
    expect((await check(anchored, { ...statement, chain: [] })).why).toMatch(/does not chain/);
    // An issuer that is not a CA vouches for nothing.
    const leafIssued = certificate("Vendor Key 2", { issuer: issued });
    expect((await check(anchored, { ...statement, attestation: leafIssued, chain: [issued] })).why).toMatch(
      /not issued by the next one/,
    );
  });

  it("anchors are the tenant's own: a root named in another tenant's policy anchors nothing here", async () => {
    const otherRoot = certificate("Other Vendor Root CA", { ca: true });
    const issued = certificate("Other Vendor Key", { issuer: otherRoot });
    const refused = await check(anchored, { fmt: "fido-u2f", attestation: issued, chain: [] });
    expect(refused.why).toMatch(/does not chain to a trust anchor/);
    const other = settingsFor("direct", [pem(otherRoot)]);
    expect(await check(other, { fmt: "fido-u2f", attestation: issued, chain: [] })).toEqual({ ok: true });
  });

  it('with attestation "direct" and no trust anchor in the policy, every registration is refused', async () => {
    const issued = certificate("Vendor Key", { issuer: root });
    const refused = await check(settingsFor("direct"), { fmt: "packed", attestation: issued, chain: [] });
    expect(refused.why).toMatch(/names no trust anchors \(challenge\.deviceAttestation\.trustAnchors\)/);
  });
});
