import { hash, randomBytes, randomFillSync } from "node:crypto";
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
  const buf = Buffer.allocUnsafe(22);
  buf.writeUIntBE(now, 0, 6);
  takeRandom(buf, 6, 16);
  return `${prefix}_${buf.toString("base64url")}`;
}

/**
 * CSPRNG bytes drawn in 4 KiB refills and handed out once each (as Node's randomUUID does): one
 * randomBytes call per id cost more than the rest of the id on the verify path.
 */
const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;
function takeRandom(target: Buffer, at: number, length: number): void {
  if (poolOffset + length > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  pool.copy(target, at, poolOffset, poolOffset + length);
  pool.fill(0, poolOffset, poolOffset + length);
  poolOffset += length;
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
