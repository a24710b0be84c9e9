import { ApiError } from "../errors.js";

/**
 * A NUL character in a query parameter or a path segment is 400 `invalid_query`, before any route
 * reads it: PostgreSQL cannot hold one in text and refuses the statement, which would otherwise
 * answer as a store fault (503, retryable) a request that no retry can fix. Bodies are checked by the
 * body parser (http/jsonBody.ts).
 */
export function refuseNulInQuery(...sources: unknown[]): void {
  for (const source of sources) {
    if (typeof source !== "object" || source === null) continue;
    for (const [name, value] of Object.entries(source)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.some((v) => typeof v === "string" && v.includes("\u0000"))) {
        throw new ApiError("invalid_query", `${name} holds a NUL character.`);
      }
    }
  }
}
