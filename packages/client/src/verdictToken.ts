import { createRemoteJWKSet, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";

/** One key set per JWKS address, shared by every check in the process (jose caches and refreshes it). */
const keySets = new Map<string, JWTVerifyGetKey>();

export function remoteKeySet(jwksUrl: string | URL): JWTVerifyGetKey {
  const url = String(jwksUrl);
  let set = keySets.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
    keySets.set(url, set);
  }
  return set;
}

export interface VerdictTokenExpectations {
  /** Warden's published keys: `${baseUrl}/.well-known/jwks.json`, or a key-set function (tests). */
  jwks: string | URL | JWTVerifyGetKey;
  /** The `iss` Warden is configured with (WARDEN_TOKEN_ISSUER). */
  issuer: string;
  /** The `aud` Warden is configured with (WARDEN_TOKEN_AUDIENCE). */
  audience: string;
  /** Your tenant id. */
  tenantId: string;
  /** The session the verify was made with (or, without one, its eventId). */
  subject: string;
  /** The decisions you accept, e.g. ["allow"]. */
  decisions?: readonly ("allow" | "challenge" | "deny")[];
  /**
   * The action the verify was made for (its `action` claim). Set it wherever one session can carry
   * verdicts of several actions, so that an allow for one action is not taken for another.
   */
  action?: string;
}

export interface VerdictClaims extends JWTPayload {
  tid: string;
  decision: "allow" | "challenge" | "deny";
  action?: string;
}

export type TokenCheck = { ok: true; claims: VerdictClaims } | { ok: false; reason: string };

/**
 * Checks a verdictToken as docs/api.md#verdicttoken asks: the ES256 signature against the published key set, then
 * iss, aud, exp, tid and sub, and the decision (and the action, when expected). Pair it with the verdict's enforcementMode (not a
 * claim) before authorizing anything.
 */
export async function verifyVerdictToken(
  token: string,
  expect: VerdictTokenExpectations,
): Promise<TokenCheck> {
  const keys = typeof expect.jwks === "function" ? expect.jwks : remoteKeySet(expect.jwks as string | URL);
  try {
    const { payload } = await jwtVerify(token, keys, {
      algorithms: ["ES256"],
      issuer: expect.issuer,
      audience: expect.audience,
      subject: expect.subject,
      requiredClaims: ["exp", "iat", "jti", "sub", "tid"],
    });
    if (payload.tid !== expect.tenantId) return { ok: false, reason: "tid does not name your tenant" };
    const decision = payload.decision;
    if (decision !== "allow" && decision !== "challenge" && decision !== "deny")
      return { ok: false, reason: "no decision claim" };
    if (expect.decisions && !expect.decisions.includes(decision))
      return { ok: false, reason: `decision ${decision} is not accepted here` };
    if (expect.action !== undefined && payload.action !== expect.action)
      return { ok: false, reason: "action does not name the action expected here" };
    return { ok: true, claims: payload as VerdictClaims };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
