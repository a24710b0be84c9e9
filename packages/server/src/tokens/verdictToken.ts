import { SignJWT } from "jose";
import type { ActorType, Decision } from "../store/interfaces.js";
import type { ActiveSigner } from "./signingKeys.js";

/** Decision fields carried in the receipt. enforcementMode is deliberately not a claim (spec). */
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
 * eventId, so a receipt joins to its event.
 */
export async function signVerdictToken(
  signer: ActiveSigner,
  settings: TokenSettings,
  claims: VerdictClaims,
  nowMs: number,
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const payload: Record<string, unknown> = {
    tid: claims.tenantId,
    decision: claims.decision,
    actorType: claims.actorType,
    degraded: claims.degraded,
    action: claims.action,
  };
  if (claims.challengeCleared) payload.challengeCleared = true;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "ES256", kid: signer.kid, typ: "JWT" })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setSubject(claims.session ?? claims.eventId)
    .setJti(claims.eventId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + settings.ttlSeconds)
    .sign(signer.key);
}
