import { ApiError } from "../errors.js";

/**
 * A date-time query parameter (`since`, `until`) as epoch milliseconds; undefined when absent. The
 * schema's `date-time` format checks the form only, and RFC 3339 allows a leap second (23:59:60) that
 * Date cannot hold: such a value is 400 invalid_query here, never a NaN handed to the store.
 */
export function queryDate(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) {
    throw new ApiError(
      "invalid_query",
      `${name} is not a date-time that exists (a leap second cannot be read).`,
    );
  }
  return ms;
}
