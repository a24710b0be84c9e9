import { X509Certificate } from "node:crypto";

/**
 * The certificates a tenant trusts to vouch for authenticators (`challenge.deviceAttestation.
 * trustAnchors`): roots, or intermediates, that an attestation statement's x5c chain must reach for
 * `attestation: "direct"` (docs/api.md, device_attestation). Parsed once when the policy compiles.
 * Validity dates are checked when a chain is, not here: a stored policy must keep compiling after an
 * anchor expires (a document that stops compiling falls back to the default policy, lists and all).
 */

const BEGIN = "-----BEGIN CERTIFICATE-----";

export function compileTrustAnchors(
  pems: readonly string[],
  path: string,
  errors: string[],
): readonly X509Certificate[] {
  const anchors: X509Certificate[] = [];
  for (const [i, pem] of pems.entries()) {
    // X509Certificate reads the first certificate of a bundle and ignores the rest: one per entry.
    const count = pem.split(BEGIN).length - 1;
    if (count !== 1) {
      errors.push(`${path}[${i}]: holds ${count} PEM certificates; give exactly one per entry`);
      continue;
    }
    try {
      anchors.push(new X509Certificate(pem));
    } catch {
      errors.push(`${path}[${i}]: is not a PEM X.509 certificate`);
    }
  }
  return Object.freeze(anchors);
}
