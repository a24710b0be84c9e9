import { hash, randomBytes } from "node:crypto";
import canonicalize from "canonicalize";

/** An unguessable identifier: `prefix_` then `bytes` random bytes in base64url. */
export function randomId(prefix: string, bytes = 16): string {
  return `${prefix}_${randomBytes(bytes).toString("base64url")}`;
}

/**
 * An unguessable identifier that sorts by creation time: 48 bits of milliseconds, then 128 random
 * bits, in base64url (like UUIDv7). Consecutive inserts land at the right edge of a B-tree index
 * instead of random pages, so a batch of inserts dirties a few pages instead of one page each.
 */
export function timeOrderedId(prefix: string, now: number): string {
  const buf = randomBytes(22);
  buf.writeUIntBE(now, 0, 6);
  return `${prefix}_${buf.toString("base64url")}`;
}

export function sha256Hex(input: string): string {
  return hash("sha256", input, "hex");
}

/**
 * RFC 8785 canonical JSON (keys sorted, undefined members omitted), via the `canonicalize` package.
 * Used for payload fingerprints, where key order in the request must not matter.
 */
export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? "null";
}
