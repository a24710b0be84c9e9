import { randomBytes } from "node:crypto";
import type { TenantPolicies } from "../../policy/tenantPolicies.js";
import { BASE_POW_DIFFICULTY } from "../../policy/tenantPolicy.js";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { powSeed, probeSeed, sealPageToken } from "../../tokens/pageToken.js";
import type { SigningKeyring } from "../../tokens/signingKeys.js";
import type { Caller } from "../caller.js";
import { POW_ALGORITHM } from "../challenge/methods/proofOfWork/proofOfWork.js";
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
  /** For the difficulty the page solves its proof of work at (the tenant's severe one). */
  tenantPolicies: TenantPolicies;
}

/** The proof of work a page solves in the background, as a challenge's instructions give one. */
export interface PagePow {
  type: "pow";
  seed: string;
  difficulty: number;
  algorithm: typeof POW_ALGORITHM;
}

export type PageTokenResult =
  | {
      ok: true;
      pageToken: string;
      expiresAt: string;
      probe?: { boxes: readonly ProbeBox[] };
      pow?: PagePow;
    }
  | { ok: false; code: "raw_pii_not_enabled" | "invalid_field"; message: string };

/**
 * POST /v1/page-tokens as an operation: a page token for the page that just loaded, bound to its
 * tenant, time, network and user agent (tokens/pageToken.ts), with `probe: true` the layout probe the
 * page must measure (layoutProbe.ts), and with `pow: true` the proof of work a challenge on its
 * attempt will be sealed with (tokens/pageToken.ts powSeed), for the page to solve before it is
 * asked. Nothing is written to the store: an HMAC under a key every process derives from the signing
 * key; the tenant's policy is read as the process holds it.
 */
export async function issuePageToken(
  deps: PageTokenDeps,
  caller: Caller,
  req: PageTokenRequest,
): Promise<PageTokenResult> {
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
  return {
    ok: true,
    pageToken,
    expiresAt,
    // With a probe asked for, the token binds the form to measuring it (verify's page environment).
    ...(probe && { probe: { boxes: layoutProbe(probeSeed(key, nonce)).boxes } }),
    ...(req.pow === true && {
      pow: {
        type: "pow",
        seed: powSeed(key, nonce),
        difficulty: await severeDifficulty(deps.tenantPolicies, caller.tenant.id),
        algorithm: POW_ALGORITHM,
      },
    }),
  };
}

/**
 * The difficulty a page solves its seed at: the tenant's severe one, the most a challenge seals, so
 * that its answer meets any tier (sha256-prefix: a digest with more leading zeros has the fewer). A
 * page token needs no store: while the policy cannot be read, the documented severe difficulty.
 */
async function severeDifficulty(policies: TenantPolicies, tenantId: string): Promise<number> {
  try {
    return (await policies.get(tenantId)).powDifficulty.severe;
  } catch (err) {
    if (!(err instanceof StoreUnavailableError)) throw err;
    return policies.peek(tenantId)?.powDifficulty.severe ?? BASE_POW_DIFFICULTY.severe;
  }
}
