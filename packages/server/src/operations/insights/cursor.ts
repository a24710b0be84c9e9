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

/** How many items one store read of a list brings to this thread: a few milliseconds of its work. */
export const READ_ROWS = 500;

/** `a` sits after `b` in the newest-first order, or is `b`. */
const atOrAfter = (a: Cursor, b: Cursor): boolean => a.at < b.at || (a.at === b.at && a.id <= b.id);

/**
 * A newest-first list read in store reads of at most `pageRows` items (keyset paging: each read
 * starts after the last item of the one before), yielded read by read, so that no read brings more
 * than a few milliseconds of work to the event loop and each export waits for the store between
 * them. Stops once `limit` items were yielded (the generator's value is then the cursor after the
 * last, when more follow), when the list is exhausted, or after the item at `through`.
 */
export async function* readPages<T>(options: {
  limit: number;
  start: Cursor | undefined;
  read: (before: Cursor | undefined, count: number) => Promise<T[]>;
  position: (item: T) => Cursor;
  pageRows?: number;
  through?: Cursor | undefined;
}): AsyncGenerator<T[], string | null> {
  const { limit, read, position, through, pageRows = READ_ROWS } = options;
  let before = options.start;
  let left = limit;
  while (left > 0) {
    const want = Math.min(pageRows, left);
    // One more than the page holds: whether more follow.
    const found = await read(before, want + 1);
    let page = found.slice(0, want);
    if (through) {
      const past = page.findIndex((item) => !atOrAfter(through, position(item)));
      if (past !== -1) page = page.slice(0, past);
    }
    const last = page[page.length - 1];
    if (page.length > 0) yield page;
    left -= page.length;
    if (!last || page.length < want || found.length <= want) return null;
    before = position(last);
    if (through && before.at === through.at && before.id === through.id) return null;
  }
  return before ? encodeCursor(before) : null;
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
  const items: T[] = [];
  const pages = readPages({
    limit,
    start: cursor === undefined ? undefined : decodeCursor(cursor),
    read,
    position,
  });
  for (;;) {
    const next = await pages.next();
    if (next.done) return { items, nextCursor: next.value };
    items.push(...next.value);
  }
}
