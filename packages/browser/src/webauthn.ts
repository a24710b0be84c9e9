/**
 * device_attestation in the page: the two WebAuthn ceremonies Warden's instructions describe. A fresh
 * credential is created with `creationOptions`, then used to sign `requestOptions`' challenge; the
 * proof is both credentials as JSON, for the integrator's backend to complete with. The browser asks
 * the person (a platform authenticator's prompt, or a security key's touch); a refusal or a timeout
 * rejects with the browser's own error (NotAllowedError).
 */
export interface DeviceAttestationInstructions {
  creationOptions: PublicKeyCredentialCreationOptionsJSON;
  requestOptions: PublicKeyCredentialRequestOptionsJSON;
}

export interface DeviceAttestationProof {
  method: "webauthn";
  registration: unknown;
  assertion: unknown;
}

/** Whether this browser can run the ceremonies (a secure context with WebAuthn's JSON helpers). */
export function deviceAttestationSupported(): boolean {
  return (
    typeof PublicKeyCredential !== "undefined" &&
    typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function" &&
    typeof navigator.credentials?.create === "function"
  );
}

export async function deviceAttestationProof(
  instructions: DeviceAttestationInstructions,
  signal?: AbortSignal,
): Promise<DeviceAttestationProof> {
  const created = (await navigator.credentials.create({
    publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(instructions.creationOptions),
    ...(signal ? { signal } : {}),
  })) as PublicKeyCredential | null;
  if (!created) throw new DOMException("No credential was created.", "NotAllowedError");
  const registration = created.toJSON();
  const asserted = (await navigator.credentials.get({
    publicKey: PublicKeyCredential.parseRequestOptionsFromJSON({
      ...instructions.requestOptions,
      allowCredentials: [{ type: "public-key", id: created.id }],
    }),
    ...(signal ? { signal } : {}),
  })) as PublicKeyCredential | null;
  if (!asserted) throw new DOMException("No assertion was made.", "NotAllowedError");
  return { method: "webauthn", registration, assertion: asserted.toJSON() };
}
