import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../lib/crypto.js";

/**
 * Page tokens: evidence that a form's page ran. `@warden/browser` asks for one when the page loads
 * (through the integrator's server, which calls POST /v1/page-tokens with its API key) and the form
 * carries it back to verify as `subject.page.token`. What it proves is narrow and server-side:
 * Warden issued it to this tenant, at `issuedAt` (so verify knows, without trusting the page, how long
 * the form was open), for a request from this network and user agent; its nonce is counted at verify,
 * so one token does not serve many attempts. A script can fetch one too: it must then behave like the
 * page (ask first, wait, submit once, from the same network and user agent) — docs/security-model.md.
 *
 * The token is `wpt1.<kid>.<payload>.<mac>`: the payload is base64url JSON, the MAC an HMAC-SHA-256
 * under a key derived (HKDF) from the signing key `kid`, so every process that can sign verdicts can
 * issue and check page tokens, and a rotation retires both together. Nothing is stored at issue.
 */

const PREFIX = "wpt1";
export const MAX_PAGE_TOKEN = 512;

export interface PageTokenClaims {
  tenantId: string;
  issuedAt: number;
  /** 16 random bytes, base64url: the key verify counts reuse on. */
  nonce: string;
  /** Short hashes of the issuing request's network and user agent ("" when it had none). */
  network: string;
  userAgent: string;
  /**
   * The page was handed a layout probe with its token (operations/page/layoutProbe.ts): the form
   * must carry the probe's measurements, which only a page laid out by a browser engine has.
   */
  probe?: true;
}

/** The HMAC key for page tokens derived from a signing key's private scalar. */
export function derivePageKey(privateScalar: string, kid: string): Buffer {
  return Buffer.from(
    hkdfSync("sha256", Buffer.from(privateScalar, "base64url"), "warden-page-token", kid, 32),
  );
}

/**
 * The seed of a token's layout probe: an HMAC of its nonce under the page-token key, so that the
 * probe's boxes and answer cannot be computed from the token (whose payload is readable) without
 * the key; the page is handed the boxes and must lay them out.
 */
export const probeSeed = (key: Buffer, nonce: string): string =>
  createHmac("sha256", key).update(`warden-layout-probe:${nonce}`).digest("base64url");

/**
 * The proof-of-work seed of a token (docs/api.md, page evidence): 32 hex characters of an HMAC of its
 * nonce under the page-token key, apart from the probe's by its label. The page is handed it and
 * solves it in the background while the person fills the form in; a challenge on the attempt that
 * carries the token is sealed with it (methods/proofOfWork), so the answer is ready at submit. Keyed,
 * so that no one computes it from the token's readable nonce.
 */
export const powSeed = (key: Buffer, nonce: string): string =>
  createHmac("sha256", key).update(`warden-pow-seed:${nonce}`).digest("hex").slice(0, 32);

/** A short, one-way tag of a request property bound into the token (never the value itself). */
export const bindingTag = (value: string | undefined): string =>
  value === undefined || value === "" ? "" : sha256Hex(`warden-page:${value}`).slice(0, 16);

const mac = (key: Buffer, signed: string): Buffer => createHmac("sha256", key).update(signed).digest();

export function sealPageToken(kid: string, key: Buffer, claims: PageTokenClaims): string {
  const payload = Buffer.from(
    JSON.stringify({
      t: claims.tenantId,
      i: claims.issuedAt,
      n: claims.nonce,
      a: claims.network,
      u: claims.userAgent,
      ...(claims.probe && { p: 1 }),
    }),
  ).toString("base64url");
  const signed = `${PREFIX}.${kid}.${payload}`;
  return `${signed}.${mac(key, signed).toString("base64url")}`;
}

/**
 * The claims of a token whose MAC checks under the key of its `kid` (`keyOf`), or undefined for
 * anything else: another format, an unknown or unpublished key, a changed byte.
 */
export function openPageToken(
  token: string,
  keyOf: (kid: string) => Buffer | undefined,
): PageTokenClaims | undefined {
  if (token.length > MAX_PAGE_TOKEN) return undefined;
  const parts = token.split(".");
  if (parts.length !== 4 || parts[0] !== PREFIX) return undefined;
  const [, kid = "", payload = "", given = ""] = parts;
  const key = keyOf(kid);
  if (!key) return undefined;
  const expected = mac(key, `${PREFIX}.${kid}.${payload}`);
  const actual = Buffer.from(given, "base64url");
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  const { t, i, n, a, u, p } = (body ?? {}) as Record<string, unknown>;
  if (typeof t !== "string" || typeof i !== "number" || typeof n !== "string") return undefined;
  if (typeof a !== "string" || typeof u !== "string") return undefined;
  return { tenantId: t, issuedAt: i, nonce: n, network: a, userAgent: u, ...(p === 1 && { probe: true }) };
}
