import { StoreUnavailableError } from "../store/interfaces.js";
import type { RouteSettings } from "./types.js";

/** Rejects with StoreUnavailableError when `work` takes longer than `ms` (the work itself goes on). */
export async function within<T>(ms: number | undefined, work: Promise<T>): Promise<T> {
  if (ms === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`no answer within the request's ${ms} ms budget`)),
      Math.max(1, ms),
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What is left of a route's deadline for this request, or undefined when the route has none. */
export function remainingBudget(settings: RouteSettings, elapsedMs: number): number | undefined {
  return settings.deadlineMs === undefined ? undefined : settings.deadlineMs - elapsedMs;
}
