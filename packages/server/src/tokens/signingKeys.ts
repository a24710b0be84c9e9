import { createPrivateKey, type JsonWebKey, type KeyObject } from "node:crypto";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { randomId } from "../lib/crypto.js";
import type { SigningKeyRecord, Store } from "../store/interfaces.js";
import { derivePageKey } from "./pageToken.js";

export interface ActiveSigner {
  kid: string;
  /** A node:crypto key: tokens are signed synchronously (verdictToken.ts says why). */
  key: KeyObject;
}

export interface PublishedKeySet {
  keys: JWK[];
}

export async function newSigningKey(now: number): Promise<SigningKeyRecord> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = randomId("sig", 12);
  const meta = { kid, alg: "ES256", use: "sig" };
  return {
    kid,
    privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), ...meta }),
    publicJwk: JSON.stringify({ ...(await exportJWK(publicKey)), ...meta }),
    createdAt: now,
    retiredAt: null,
    publishUntil: null,
  };
}

/** The private key of a stored signing key, as node:crypto signs with it. */
export function signerKey(privateJwk: string): KeyObject {
  const jwk = JSON.parse(privateJwk) as JWK;
  if (jwk.kty !== "EC" || jwk.crv !== "P-256") throw new Error("signing keys are ES256 (EC P-256) keys");
  return createPrivateKey({ key: jwk as JsonWebKey, format: "jwk" });
}

/**
 * How long a retired key stays published: its last tokens may be signed by a process that has not
 * reloaded yet (up to one refresh interval), and each lives for the token lifetime.
 */
export function keepPublishedMs(tokenTtlSeconds: number, refreshSeconds: number): number {
  return (tokenTtlSeconds + refreshSeconds + 60) * 1000;
}

/**
 * The process's view of the signing keys in the store: the one signer and the published key set.
 * Reloaded every `refreshSeconds`; if the store is unreachable the last loaded view stays in use,
 * so degraded verdicts are still signed.
 */
/**
 * How long after a rotation the new key starts signing: every process reloads its keys at least once
 * in a refresh interval and publishes the new key then, so by twice that plus a margin every
 * process's JWKS has it before any process signs with it (a receiver that fetched one process's JWKS
 * can check a token another process signed).
 */
export function activationDelayMs(refreshSeconds: number): number {
  return (2 * refreshSeconds + 5) * 1000;
}

/** A stored key that may sign: from `from` (its createdAt, its activation) until `until` (its retirement). */
interface SignerWindow extends ActiveSigner {
  from: number;
  until: number | null;
}

export class SigningKeyring {
  /** Keys that sign now or will (a rotation's next key waits for its activation), newest first. */
  private signers: SignerWindow[] = [];
  private published: PublishedKeySet = { keys: [] };
  /** Page-token keys (pageToken.ts) of every published signing key, by kid. */
  private pageKeys: ReadonlyMap<string, Buffer> = new Map();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly refreshSeconds: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Creates the first key when the store has none, then loads. */
  async start(): Promise<void> {
    const now = this.clock();
    if ((await this.store.signingKeys.listPublished(now)).every((k) => k.retiredAt !== null)) {
      await this.store.signingKeys.insertIfNone(await newSigningKey(now));
    }
    await this.reload();
    this.timer = setInterval(() => {
      this.reload().catch(() => {
        // Keep the last loaded keys; /readyz reports the store outage.
      });
    }, this.refreshSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async reload(): Promise<void> {
    const now = this.clock();
    const records = await this.store.signingKeys.listPublished(now);
    const known = new Map(this.signers.map((w) => [w.kid, w]));
    const signers = records
      .filter((r) => r.retiredAt === null || r.retiredAt > now)
      .map((r) => ({
        kid: r.kid,
        key: known.get(r.kid)?.key ?? signerKey(r.privateJwk),
        from: r.createdAt,
        until: r.retiredAt,
      }))
      .sort((a, b) => b.from - a.from);
    if (signers.length === 0) throw new Error("no active signing key in the store");
    this.signers = signers;
    this.published = { keys: records.map((r) => JSON.parse(r.publicJwk) as JWK) };
    const pageKeys = new Map<string, Buffer>();
    for (const r of records) {
      const known = this.pageKeys.get(r.kid);
      pageKeys.set(r.kid, known ?? derivePageKey(String((JSON.parse(r.privateJwk) as JWK).d), r.kid));
    }
    this.pageKeys = pageKeys;
  }

  /** The page-token key of a published signing key (any process that loaded it derives the same). */
  pageKey(kid: string): Buffer | undefined {
    return this.pageKeys.get(kid);
  }

  /**
   * The key that signs now: the newest whose activation has come and whose retirement has not (read
   * on every call, so a rotation takes effect at its activation time in every process, between
   * reloads). Should clocks disagree so that none qualifies, the oldest loaded key signs: it is
   * published everywhere.
   */
  activeSigner(): ActiveSigner {
    const now = this.clock();
    const current =
      this.signers.find((w) => w.from <= now && (w.until === null || w.until > now)) ?? this.signers.at(-1);
    if (!current) throw new Error("signing keyring not started");
    return current;
  }

  keySet(): PublishedKeySet {
    return this.published;
  }
}
