import { sha256Hex } from "../../lib/crypto.js";
import { normaliseHeaders } from "./signals/browserHeaders.js";
import { emailHash } from "./signals/email.js";
import { readNetwork } from "./signals/ip.js";

/**
 * What makes two verify calls the same attempt, for binding a challenge's clear to the attempt it was
 * earned on (docs/security-model.md). Tenant and session are compared as columns; this fingerprint
 * covers the action and the subject's identifying fields:
 * - the email address, as its SHA-256 (a raw `email` and the `emailSha256` of the same address match);
 * - the network, truncated to /24 or /48 as verify reads it (`ip` or `ipTrunc`);
 * - the user agent, exactly: `subject.userAgent`, or the forwarded `User-Agent` header where that field
 *   is absent (the one verify scores).
 * Other headers and form data are not part of it: they legitimately change between a verify and its
 * re-verify (what they carry is still weighed: a re-verify that scores deny on its own is not cleared).
 * An absent field is part of the fingerprint too, so a re-verify can neither add nor drop one.
 *
 * Total: any input gives a fingerprint (the degraded path calls it on whatever the request held).
 */
export function attemptFingerprint(action: unknown, subject: unknown): string {
  const s = typeof subject === "object" && subject !== null ? (subject as Record<string, unknown>) : {};
  const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const email = text(s.email);
  const emailKey = email !== undefined ? emailHash(email) : text(s.emailSha256)?.toLowerCase();
  const rawNetwork = text(s.ip) ?? text(s.ipTrunc);
  const networkKey = rawNetwork === undefined ? undefined : (readNetwork(rawNetwork)?.text ?? rawNetwork);
  return sha256Hex(
    JSON.stringify([
      text(action) ?? null,
      emailKey ?? null,
      networkKey ?? null,
      // The forwarded User-Agent as verify reads it (normaliseHeaders: any case, the last one wins).
      text(s.userAgent) ??
        text(normaliseHeaders(isRecord(s.headers) ? s.headers : undefined)?.["user-agent"]) ??
        null,
    ]),
  );
}

const isRecord = (v: unknown): v is Record<string, string | string[]> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
