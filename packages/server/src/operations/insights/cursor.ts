import { ApiError } from "../../errors.js";

/**
 * A page's cursor: where the last item sat in the newest-first order (its time and id), opaque to
 * callers (base64url JSON). A cursor that does not decode is 400 invalid_query, never a 500.
 */
export interface Cursor {
  at: number;
  id: string;
}

export const encodeCursor = (c: Cursor): string =>
  Buffer.from(JSON.stringify([c.at, c.id])).toString("base64url");

export function decodeCursor(text: string): Cursor {
  try {
    const value = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === "string" &&
      // The ids this API gives (events' evt_…): anything else, a NUL included, is no cursor of ours.
      /^[A-Za-z0-9_-]{1,128}$/.test(value[1])
    ) {
      return { at: value[0] as number, id: value[1] };
    }
  } catch {
    // fall through
  }
  throw new ApiError("invalid_query", "cursor is not a cursor this API gave.");
}

/**
 * One page of a newest-first list: reads one item more than the page holds, so the cursor after the
 * page's last item is given only when more follow. `position` is where an item sits in the order.
 */
export async function readPage<T>(
  limit: number,
  cursor: string | undefined,
  read: (before: Cursor | undefined, count: number) => Promise<T[]>,
  position: (item: T) => Cursor,
): Promise<{ items: T[]; nextCursor: string | null }> {
  const found = await read(cursor === undefined ? undefined : decodeCursor(cursor), limit + 1);
  const items = found.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: found.length > limit && last ? encodeCursor(position(last)) : null };
}
