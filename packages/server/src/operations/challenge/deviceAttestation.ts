import { createHash, randomBytes } from "node:crypto";
import {
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { decodeAttestationObject } from "@simplewebauthn/server/helpers";
import type { DeviceAttestationSettings } from "../../policy/tenantPolicy.js";
import type { ChallengeRecord } from "../../store/interfaces.js";

/**
 * device_attestation on WebAuthn, in two ceremonies on the page: `navigator.credentials.create`
 * makes a fresh credential (with the tenant's attestation conveyance), then `navigator.credentials.get`
 * signs a second challenge with it. Registration alone proves nothing with "none" attestation (the
 * public key is only reported), so the assertion's signature is what proves possession of the key.
 * Both challenges are derived from a random seed sealed at issue, the challenge's id and its session,
 * so a response made for one challenge or session proves nothing for another.
 * Verified with @simplewebauthn/server: type, challenge, origin (the tenant's list), RP id hash,
 * user presence, the attestation statement (when present), the assertion's signature and counter.
 */

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
        pubKeyCredParams: [
          { type: "public-key", alg: -7 },
          { type: "public-key", alg: -8 },
          { type: "public-key", alg: -257 },
        ],
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
      ...expected,
    });
    if (!registered.verified) return { ok: false, why: "the registration was not verified" };
    const info = registered.registrationInfo;
    if (settings.attestation === "direct" && info.fmt === "none")
      return { ok: false, why: "the tenant requires an attestation statement and none was given" };
    if (settings.attestation === "direct" && selfAttested(info.fmt, info.attestationObject)) {
      // Packed self-attestation is signed by the credential's own key: any software key can make it.
      return {
        ok: false,
        why: "the tenant requires an attestation key's statement; a self-attestation (no certificate) was given",
      };
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

/** A packed statement without a certificate chain: signed by the credential key itself (WebAuthn §8.2). */
function selfAttested(fmt: string, attestationObject: Uint8Array<ArrayBuffer>): boolean {
  if (fmt !== "packed") return false;
  return decodeAttestationObject(attestationObject).get("attStmt").get("x5c") === undefined;
}

function isCredential(v: unknown): v is { id: string; response: object } {
  const o = v as { id?: unknown; response?: unknown } | undefined;
  return typeof o === "object" && o !== null && typeof o.id === "string" && typeof o.response === "object";
}
