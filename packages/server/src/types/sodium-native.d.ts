/** The part of sodium-native (MIT, libsodium bindings) Warden uses; the package ships no types. */
declare module "sodium-native" {
  /** libsodium's Ed25519 check; reads the first 64 bytes of `signature` (the caller checks its length). */
  export function crypto_sign_verify_detached(
    signature: Uint8Array,
    message: Uint8Array,
    publicKey: Uint8Array,
  ): boolean;
  export const crypto_sign_BYTES: number;
  export const crypto_sign_PUBLICKEYBYTES: number;
}
