import { createHash, randomBytes } from "node:crypto";
import {
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { decodeAttestationObject } from "@simplewebauthn/server/helpers";
import { Type } from "@sinclair/typebox";
import type { DeviceAttestationSettings } from "../../../../policy/tenantPolicy.js";
import type { ChallengeRecord } from "../../../../store/interfaces.js";
import { type Method, refuse } from "../../method.js";
import { type ChainCheck, chainToAnchor } from "./attestationChain.js";

/**
 * device_attestation on WebAuthn, in two ceremonies on the page: `navigator.credentials.create`
 * makes a fresh credential (with the tenant's attestation conveyance), then `navigator.credentials.get`
 * signs a second challenge with it. Registration alone proves nothing with "none" attestation (the
 * public key is only reported), so the assertion's signature is what proves possession of the key.
 * Both challenges are derived from a random seed sealed at issue, the challenge's id and its session,
 * so a response made for one challenge or session proves nothing for another.
 * Verified with @simplewebauthn/server: type, challenge, origin (the tenant's list), RP id hash,
 * user presence, the attestation statement (when present), the assertion's signature and counter.
 * With attestation "direct", the statement's certificate chain must also reach one of the tenant's
 * trust anchors (attestationChain.ts): a statement that only verifies proves nothing about the device.
 */

/** ES256, Ed25519, RS256 (COSE ids): offered at issue and the only ones accepted at completion. */
const PUBLIC_KEY_ALGORITHMS = [-7, -8, -257] as const;

const base64url = (b: Buffer) => b.toString("base64url");
const derive = (seed: string, id: string, session: string, ceremony: "create" | "get") =>
  base64url(createHash("sha256").update(`${seed}\n${id}\n${session}\n${ceremony}`).digest());

/** Sealed at issue: the seed, and the options the page hands to the two ceremonies (JSON forms). */
export function deviceAttestationChallenge(
  id: string,
  session: string,
  settings: DeviceAttestationSettings,
  timeoutMs: number,
): Pick<ChallengeRecord, "difficulty" | "seed" | "instructions"> {
  const seed = randomBytes(32).toString("base64url");
  return {
    difficulty: null,
    seed,
    instructions: {
      type: "webauthn",
      rpId: settings.rpId,
      attestation: settings.attestation,
      // PublicKeyCredentialCreationOptionsJSON (PublicKeyCredential.parseCreationOptionsFromJSON).
      creationOptions: {
        challenge: derive(seed, id, session, "create"),
        rp: { id: settings.rpId, name: settings.rpId },
        // A throwaway user handle: the credential identifies no one (docs/api.md, device_attestation).
        user: { id: base64url(randomBytes(16)), name: `warden-${id}`, displayName: "Device check" },
        pubKeyCredParams: PUBLIC_KEY_ALGORITHMS.map((alg) => ({ type: "public-key", alg })),
        timeout: timeoutMs,
        attestation: settings.attestation,
        authenticatorSelection: { userVerification: "preferred", residentKey: "discouraged" },
      },
      // PublicKeyCredentialRequestOptionsJSON without allowCredentials: the page adds the new id.
      requestOptions: {
        challenge: derive(seed, id, session, "get"),
        rpId: settings.rpId,
        timeout: timeoutMs,
        userVerification: "preferred",
      },
      steps:
        'navigator.credentials.create with creationOptions, then navigator.credentials.get with requestOptions and allowCredentials naming the new credential; complete with proof { method: "webauthn", registration, assertion } (each credential\'s toJSON()).',
    },
  };
}

export type AttestationCheck = { ok: true; credentialId: string } | { ok: false; why: string };

/** Completion: both ceremonies verified against what was sealed at issue and the tenant's settings. */
export async function checkDeviceAttestation(
  proof: { registration?: unknown; assertion?: unknown },
  c: Pick<ChallengeRecord, "id" | "session" | "seed">,
  settings: DeviceAttestationSettings,
): Promise<AttestationCheck> {
  const registration = proof.registration as RegistrationResponseJSON | undefined;
  const assertion = proof.assertion as AuthenticationResponseJSON | undefined;
  if (!isCredential(registration) || !isCredential(assertion))
    return { ok: false, why: "registration and assertion are both required" };
  if (assertion.id !== registration.id)
    return { ok: false, why: "the assertion is not made with the registered credential" };
  const seed = c.seed ?? "";
  const expected = {
    expectedOrigin: [...settings.origins],
    expectedRPID: settings.rpId,
    // Preferred, not required: a security key without a PIN still proves a key and a touch.
    requireUserVerification: false,
  };
  try {
    const registered = await verifyRegistrationResponse({
      response: registration,
      expectedChallenge: derive(seed, c.id, c.session, "create"),
      supportedAlgorithmIDs: [...PUBLIC_KEY_ALGORITHMS],
      ...expected,
    });
    if (!registered.verified) return { ok: false, why: "the registration was not verified" };
    const info = registered.registrationInfo;
    if (settings.attestation === "direct") {
      const anchored = anchoredStatement(info.fmt, info.attestationObject, settings);
      if (!anchored.ok) return anchored;
    }
    const asserted = await verifyAuthenticationResponse({
      response: assertion,
      expectedChallenge: derive(seed, c.id, c.session, "get"),
      credential: info.credential,
      ...expected,
    });
    if (!asserted.verified) return { ok: false, why: "the assertion's signature was not verified" };
    return { ok: true, credentialId: info.credential.id };
  } catch (err) {
    // The library explains each refusal (challenge, origin, RP id, signature, counter) by throwing.
    return { ok: false, why: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Direct mode, once the library verified the statement's signature: the statement must be made by an
 * attestation key whose certificate chains to one of the tenant's anchors. Without that chain any
 * software key can make one: packed self-attestation is signed by the credential key itself
 * (WebAuthn §8.2), and a self-signed certificate in a packed or fido-u2f x5c verifies just as well.
 */
function anchoredStatement(
  fmt: string,
  attestationObject: Uint8Array<ArrayBuffer>,
  settings: DeviceAttestationSettings,
): ChainCheck {
  if (fmt === "none")
    return { ok: false, why: "the tenant requires an attestation statement and none was given" };
  const x5c = decodeAttestationObject(attestationObject).get("attStmt").get("x5c");
  if (x5c === undefined || x5c.length === 0) {
    return {
      ok: false,
      why:
        fmt === "packed"
          ? "the tenant requires an attestation key's statement; a self-attestation (no certificate) was given"
          : `the tenant requires a certificate chain and the ${fmt} statement carries none (x5c)`,
    };
  }
  if (!settings.trustAnchors)
    return {
      ok: false,
      why: "the tenant's policy names no trust anchors (challenge.deviceAttestation.trustAnchors), so no attestation chain can be verified",
    };
  return chainToAnchor(x5c, settings.trustAnchors, new Date());
}

function isCredential(v: unknown): v is { id: string; response: object } {
  const o = v as { id?: unknown; response?: unknown } | undefined;
  return typeof o === "object" && o !== null && typeof o.id === "string" && typeof o.response === "object";
}

/**
 * device_attestation, issuable to a tenant whose policy names a WebAuthn relying party
 * (challenge.deviceAttestation). A credential clears one challenge only: a key kept by a bot farm is
 * not a standing pass.
 */
export const deviceAttestationMethod: Method = {
  name: "device_attestation",
  proof: {
    names: ["webauthn"],
    form: "{ method: webauthn, registration, assertion } (the two WebAuthn credentials' toJSON())",
    members: {
      registration: Type.Optional(
        Type.Object(
          {},
          {
            additionalProperties: true,
            description:
              "device_attestation: the credential from navigator.credentials.create, as its toJSON() (RegistrationResponseJSON).",
          },
        ),
      ),
      assertion: Type.Optional(
        Type.Object(
          {},
          {
            additionalProperties: true,
            description:
              "device_attestation: the credential from navigator.credentials.get with the new credential, as its toJSON() (AuthenticationResponseJSON).",
          },
        ),
      ),
    },
  },
  issuable: ({ policy }) => policy.deviceAttestation !== undefined,
  seal({ deps, session, policy }, challengeId) {
    const settings = policy.deviceAttestation;
    // issuable() read the same policy object.
    if (!settings)
      throw new Error("device_attestation sealed for a tenant whose policy names no relying party");
    return deviceAttestationChallenge(challengeId, session, settings, deps.ttlMs);
  },
  async check({ deps, tenantId, challenge, proof }) {
    const settings = (await deps.tenantPolicies.get(tenantId)).deviceAttestation;
    if (!settings) {
      return refuse("invalid_challenge_proof", "Device attestation is no longer configured for this tenant.");
    }
    const check = await checkDeviceAttestation(proof, challenge, settings);
    if (!check.ok)
      return refuse("invalid_challenge_proof", `The WebAuthn proof was not accepted: ${check.why}.`);
    return {
      ok: true,
      singleUse: {
        ref: `webauthn:${check.credentialId}`,
        reused: refuse(
          "invalid_challenge_proof",
          "The WebAuthn proof was not accepted: this credential already cleared another challenge.",
        ),
      },
    };
  },
};
