import { ApiError } from "../errors.js";

/** Idempotency keys: 1..255 printable ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/** The Idempotency-Key header wins over the body's idempotencyKey (docs/api.md#idempotency). */
export function idempotencyKeyOf(header: unknown, body: unknown): string | undefined {
  if (header !== undefined && typeof header !== "string") throw new ApiError("invalid_idempotency_key");
  const key = typeof header === "string" ? header : typeof body === "string" ? body : undefined;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) throw new ApiError("invalid_idempotency_key");
  return key;
}

export const IDEMPOTENCY_HEADER_SCHEMA = {
  type: "object",
  properties: { "idempotency-key": { type: "string", description: "Wins over the body's idempotencyKey." } },
} as const;
