import { createHash, randomBytes } from "node:crypto";
import canonicalize from "canonicalize";

/** An unguessable identifier: `prefix_` then `bytes` random bytes in base64url. */
export function randomId(prefix: string, bytes = 16): string {
  return `${prefix}_${randomBytes(bytes).toString("base64url")}`;
}

export function sha256Hex(input: string): string {
  return createHash("sha256").update(input, "utf8").digest("hex");
}

/**
 * RFC 8785 canonical JSON (keys sorted, undefined members omitted), via the `canonicalize` package.
 * Used for payload fingerprints, where key order in the request must not matter.
 */
export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? "null";
}
