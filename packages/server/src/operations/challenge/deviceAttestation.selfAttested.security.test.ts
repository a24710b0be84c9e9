import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { describe, expect, it } from "vitest";
import type { DeviceAttestationSettings } from "../../policy/tenantPolicy.js";
import { checkDeviceAttestation, deviceAttestationChallenge } from "./deviceAttestation.js";

/**
 * A software authenticator, as a bot farm would run one: a P-256 key made in this process, its
 * registration "attested" by itself (a packed statement signed with the credential key, no
 * certificate). With attestation "none" it proves possession of the key; with "direct" it must be
 * refused, or "direct" costs a farm nothing more than "none".
 */
const ORIGIN = "http://localhost:8080";
const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();

function softwareAuthenticator() {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x as string, "base64url")],
      [-3, Buffer.from(jwk.y as string, "base64url")],
    ]),
  );
  return { privateKey, cose, id: randomBytes(16) };
}

const signed = (key: KeyObject, authData: Buffer, clientData: Buffer) =>
  sign("sha256", Buffer.concat([authData, sha256(clientData)]), key);

function ceremonies(instructions: Record<string, unknown>) {
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
    Buffer.alloc(16), // AAGUID
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
      ["fmt", "packed"],
      [
        "attStmt",
        new Map<string, unknown>([
          ["alg", -7],
          ["sig", new Uint8Array(signed(a.privateKey, regAuthData, regClient))],
        ]),
      ],
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

describe("device_attestation against a software authenticator's self-attestation", () => {
  const check = async (attestation: DeviceAttestationSettings["attestation"]) => {
    const settings: DeviceAttestationSettings = { rpId: "localhost", origins: [ORIGIN], attestation };
    const sealed = deviceAttestationChallenge("chl_self", "s-self", settings, 60_000);
    const c = { id: "chl_self", session: "s-self", seed: sealed.seed };
    return checkDeviceAttestation(ceremonies(sealed.instructions), c, settings);
  };

  it('with attestation "none", the key it holds is proof enough (possession)', async () => {
    expect(await check("none")).toMatchObject({ ok: true });
  });

  it('with attestation "direct", a statement signed by the credential key itself is refused', async () => {
    const refused = await check("direct");
    expect(refused.ok).toBe(false);
    expect(refused.ok ? "" : refused.why).toMatch(/self-attestation/);
  });
});
