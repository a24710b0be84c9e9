import { X509Certificate } from "node:crypto";

/**
 * Whether an attestation statement's certificate chain (x5c: the attestation certificate first, then
 * the intermediates it carries) reaches one of the tenant's trust anchors. @simplewebauthn/server
 * checks chains only against its global SettingsService roots, which it ships for android-key,
 * android-safetynet and apple alone, so for packed, tpm and fido-u2f it checks nothing; and one
 * global list cannot hold each tenant's own anchors. Checked here with node:crypto instead, after the
 * library has verified that x5c[0] signed the statement. Nothing is fetched: no CRL or OCSP lookup
 * (revocation is the operator's, by removing an anchor).
 */

/** A longer chain than any authenticator sends is refused before any signature is checked. */
const MAX_CHAIN = 5;

export type ChainCheck = { ok: true } | { ok: false; why: string };

const validAt = (cert: X509Certificate, now: Date) =>
  new Date(cert.validFrom) <= now && now <= new Date(cert.validTo);

/** RFC 5280 §6.1, in short: the issuer's name and key, and an issuer that is a CA. */
const issuedBy = (cert: X509Certificate, issuer: X509Certificate) =>
  issuer.ca && cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

export function chainToAnchor(
  x5c: readonly Uint8Array[],
  anchors: readonly X509Certificate[],
  now: Date,
): ChainCheck {
  if (x5c.length > MAX_CHAIN)
    return { ok: false, why: `the certificate chain is longer than ${MAX_CHAIN} certificates` };
  const chain: X509Certificate[] = [];
  for (const [i, der] of x5c.entries()) {
    try {
      chain.push(new X509Certificate(Buffer.from(der)));
    } catch {
      return { ok: false, why: `certificate ${i} of the attestation statement cannot be read` };
    }
  }
  const current = anchors.filter((a) => validAt(a, now));
  if (current.length === 0)
    return { ok: false, why: "every trust anchor in the tenant's policy is expired or not yet valid" };
  for (const [i, cert] of chain.entries()) {
    if (!validAt(cert, now))
      return { ok: false, why: `certificate ${i} of the attestation statement is expired or not yet valid` };
    // An anchor may be the certificate itself (a pinned batch certificate) or its issuer.
    if (current.some((a) => a.raw.equals(cert.raw) || issuedBy(cert, a))) return { ok: true };
    const next = chain[i + 1];
    if (next && !issuedBy(cert, next))
      return {
        ok: false,
        why: `certificate ${i} of the attestation statement is not issued by the next one`,
      };
  }
  return {
    ok: false,
    why: "the attestation certificate does not chain to a trust anchor in the tenant's policy",
  };
}
