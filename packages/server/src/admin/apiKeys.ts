import { randomBytes } from "node:crypto";
import type { Scope } from "../domain.js";
import { ALL_SCOPES } from "../domain.js";
import { randomId, sha256Hex } from "../lib/crypto.js";
import type { ApiKeyRecord, Store } from "../store/interfaces.js";

/**
 * API keys look like `wdn_<43 base64url chars>`: 256 random bits. Only SHA-256 of the whole key is
 * stored (a fast hash is enough for secrets of this entropy); the key itself is shown once.
 */
const KEY_PATTERN = /^wdn_[A-Za-z0-9_-]{43}$/;

export function isWellFormedApiKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

export function hashApiKey(apiKey: string): string {
  return sha256Hex(apiKey);
}

export function parseScopes(list: string): Scope[] {
  const scopes = list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (scopes.length === 0) throw new Error("at least one scope is required");
  for (const s of scopes) {
    if (!(ALL_SCOPES as readonly string[]).includes(s)) {
      throw new Error(`unknown scope "${s}" (known: ${ALL_SCOPES.join(", ")})`);
    }
  }
  return [...new Set(scopes)] as Scope[];
}

export interface IssuedKey {
  keyId: string;
  apiKey: string;
  tenantId: string;
  scopes: Scope[];
}

export async function issueApiKey(
  store: Store,
  input: { tenantId: string; scopes: Scope[]; logOnly: boolean; now: number },
): Promise<IssuedKey> {
  const apiKey = `wdn_${randomBytes(32).toString("base64url")}`;
  const record: ApiKeyRecord = {
    id: randomId("key", 9),
    tenantId: input.tenantId,
    scopes: input.scopes,
    logOnly: input.logOnly,
    createdAt: input.now,
    revokedAt: null,
  };
  await store.apiKeys.create(record, hashApiKey(apiKey));
  return { keyId: record.id, apiKey, tenantId: input.tenantId, scopes: input.scopes };
}

/** Tenant ids appear in tokens (tid) and URLs: keep them short and plain. */
const TENANT_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function validateTenantId(id: string): string | undefined {
  return TENANT_ID.test(id)
    ? undefined
    : "tenant id must be 1-63 of a-z, 0-9, _ or -, starting with a letter or digit";
}
