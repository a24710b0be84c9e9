import { sign } from "node:crypto";
import type { ActorType, Decision } from "../domain.js";
import type { ActiveSigner } from "./signingKeys.js";

/** Decision fields carried in the receipt. enforcementMode is deliberately not a claim (docs/api.md#verdicttoken). */
export interface VerdictClaims {
  tenantId: string;
  eventId: string;
  session: string | null;
  action: string;
  decision: Decision;
  actorType: ActorType;
  degraded: boolean;
  challengeCleared?: true;
}

export interface TokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

/**
 * ES256 decision receipt. sub is the session when one was given, otherwise the eventId; jti is the
 * eventId, so a receipt joins to its event. Signed on the calling thread: for degraded verdicts and
 * anything else that must not wait for the thread pool.
 */
export function signVerdictToken(
  signer: ActiveSigner,
  settings: TokenSettings,
  claims: VerdictClaims,
  nowMs: number,
): string {
  const input = signingInput(signer, settings, claims, nowMs);
  return compact(input, sign("sha256", Buffer.from(input), es256(signer)));
}

/**
 * The same receipt, its ECDSA signature computed on libuv's thread pool (node:crypto's `sign` with a
 * callback): the event loop keeps only the claims and the hand-off. What verify uses on its hot path;
 * see docs/api.md, "verdictToken", for the measurements behind the choice.
 */
export function signVerdictTokenOffThread(
  signer: ActiveSigner,
  settings: TokenSettings,
  claims: VerdictClaims,
  nowMs: number,
): Promise<string> {
  const input = signingInput(signer, settings, claims, nowMs);
  return new Promise((resolve, reject) => {
    sign("sha256", Buffer.from(input), es256(signer), (err, signature) => {
      if (err) reject(err);
      else resolve(compact(input, signature));
    });
  });
}

/** ES256 signatures are R || S, 64 bytes (RFC 7518 §3.4), not DER. */
const es256 = (signer: ActiveSigner) => ({ key: signer.key, dsaEncoding: "ieee-p1363" as const });

const compact = (input: string, signature: Buffer): string => `${input}.${signature.toString("base64url")}`;

/**
 * The JWS signing input in compact serialization (RFC 7515 §7.1): base64url(header).base64url(payload).
 * Signed with ES256 (RFC 7518 §3.4: ECDSA P-256 over SHA-256, the signature as the 64-byte
 * concatenation R || S).
 *
 * Why not jose's SignJWT: it signs through WebCrypto, whose job machinery cost ~180-200 µs of CPU a
 * token against ~35 µs for node:crypto's one-shot call (see docs/api.md, "verdictToken"). jose still
 * publishes the key set and verifies tokens in the tests.
 */
function signingInput(
  signer: ActiveSigner,
  settings: TokenSettings,
  claims: VerdictClaims,
  nowMs: number,
): string {
  const header = { alg: "ES256", kid: signer.kid, typ: "JWT" };
  return `${base64url(header)}.${base64url(verdictPayload(settings, claims, nowMs))}`;
}

/** The receipt's claims (docs/api.md#verdicttoken): what is signed, and what the console shows of an event. */
export function verdictPayload(
  settings: TokenSettings,
  claims: VerdictClaims,
  nowMs: number,
): Record<string, unknown> {
  const iat = Math.floor(nowMs / 1000);
  const payload: Record<string, unknown> = {
    tid: claims.tenantId,
    decision: claims.decision,
    actorType: claims.actorType,
    degraded: claims.degraded,
    action: claims.action,
  };
  if (claims.challengeCleared) payload.challengeCleared = true;
  payload.iss = settings.issuer;
  payload.aud = settings.audience;
  payload.sub = claims.session ?? claims.eventId;
  payload.jti = claims.eventId;
  payload.iat = iat;
  payload.exp = iat + settings.ttlSeconds;
  return payload;
}

const base64url = (value: Record<string, unknown>): string =>
  Buffer.from(JSON.stringify(value)).toString("base64url");
