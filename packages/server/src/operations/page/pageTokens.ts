import { randomBytes } from "node:crypto";
import { probeSeed, sealPageToken } from "../../tokens/pageToken.js";
import type { SigningKeyring } from "../../tokens/signingKeys.js";
import type { Caller } from "../caller.js";
import { normaliseHeaders } from "../verify/signals/browserHeaders.js";
import { readNetwork } from "../verify/signals/ip.js";
import { layoutProbe, type ProbeBox } from "../verify/signals/layoutProbe.js";
import { pageBinding } from "../verify/signals/pageEvidence.js";
import type { PageTokenRequest } from "./schema.js";

export interface PageTokenDeps {
  keyring: SigningKeyring;
  clock: () => number;
  /** How long a page token is accepted by verify (the decision model's pageTokenTtlMs). */
  ttlMs: number;
}

export type PageTokenResult =
  | { ok: true; pageToken: string; expiresAt: string; probe?: { boxes: readonly ProbeBox[] } }
  | { ok: false; code: "raw_pii_not_enabled" | "invalid_field"; message: string };

/**
 * POST /v1/page-tokens as an operation: a page token for the page that just loaded, bound to its
 * tenant, time, network and user agent (tokens/pageToken.ts), and with `probe: true` the layout
 * probe the page must measure (layoutProbe.ts). Nothing is read from or written to the store: an
 * HMAC under a key every process derives from the signing key.
 */
export function issuePageToken(deps: PageTokenDeps, caller: Caller, req: PageTokenRequest): PageTokenResult {
  const subject = req.subject ?? {};
  if (subject.ip !== undefined && !caller.tenant.rawPii) {
    return {
      ok: false,
      code: "raw_pii_not_enabled",
      message: "Raw subject.ip needs the tenant's opt-in; send ipTrunc instead.",
    };
  }
  const raw = subject.ip ?? subject.ipTrunc;
  const network = raw === undefined ? undefined : readNetwork(raw);
  if (raw !== undefined && !network) {
    return {
      ok: false,
      code: "invalid_field",
      message: "subject.ip or subject.ipTrunc is not an IP address or network.",
    };
  }
  const headers = normaliseHeaders(subject.headers);
  const binding = pageBinding(network?.text, subject.userAgent ?? headers?.["user-agent"]);
  const now = deps.clock();
  const signer = deps.keyring.activeSigner();
  const key = deps.keyring.pageKey(signer.kid);
  if (!key) throw new Error("the active signing key has no page-token key");
  const nonce = randomBytes(16).toString("base64url");
  const probe = req.probe === true;
  const pageToken = sealPageToken(signer.kid, key, {
    tenantId: caller.tenant.id,
    issuedAt: now,
    nonce,
    network: binding.network,
    userAgent: binding.userAgent,
    ...(probe && { probe: true }),
  });
  const expiresAt = new Date(now + deps.ttlMs).toISOString();
  // With a probe asked for, the token binds the form to measuring it (verify's page environment).
  if (!probe) return { ok: true, pageToken, expiresAt };
  return { ok: true, pageToken, expiresAt, probe: { boxes: layoutProbe(probeSeed(key, nonce)).boxes } };
}
