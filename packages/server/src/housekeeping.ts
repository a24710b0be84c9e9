import type { FastifyBaseLogger } from "fastify";
import { inRetentionHours } from "./config.js";
import type { Deps } from "./deps.js";
import { storedRetentionDays } from "./policy/tenantPolicy.js";
import { noneRemoved, type RemovedRows } from "./store/interfaces.js";

const DAY_MS = 86_400_000;
/** How often a process runs its housekeeping. */
export const HOUSEKEEPING_INTERVAL_MS = 60_000;

/** What a pass tells its log besides what it removed. */
export interface HousekeepingReport {
  /** A tenant whose policy could not be read: passed over until the next pass. */
  skipped?(tenantId: string, err: unknown): void;
  /** The coming weeks' partitions (PostgreSQL): created, or not for `err` (retention goes on). */
  partitions?(created: readonly string[], err?: unknown): void;
  /** The pass fell outside WARDEN_RETENTION_HOURS: no event was removed. */
  outsideHours?(): void;
  /** WARDEN_RETENTION_HOURS ended while the pass was removing: what it removed before it stopped. */
  windowEnded?(removed: RemovedRows): void;
}

/**
 * One pass: makes sure the coming weeks' events have partitions to go to (PostgreSQL), deletes
 * expired counters, idempotency records and console sessions, then each tenant's
 * events older than its retention with everything on them: its policy's `retentionDays`, else
 * WARDEN_RETENTION_DAYS, and never shorter than WARDEN_IDEMPOTENCY_TTL_HOURS (a retry under a
 * remembered key must find its event). Every deletion goes in chunks, so verify interleaves, and a
 * week of events whose every tenant is past its retention is dropped at once (PostgreSQL). A tenant
 * whose policy cannot be read is passed over until the next pass (`report.skipped` hears of it), the
 * others go on. Events are removed only within WARDEN_RETENTION_HOURS when it is set. Resolves what
 * retention removed.
 */
export async function housekeep(
  deps: Deps,
  signal?: AbortSignal,
  report: HousekeepingReport = {},
): Promise<RemovedRows> {
  const now = deps.clock();
  try {
    const created = await deps.store.removal.partitionsAhead(now);
    if (created.length > 0) report.partitions?.(created);
  } catch (err) {
    // A runtime role may lack the right to create them: `warden migrate` creates them too.
    report.partitions?.([], err);
  }
  await deps.store.counters.purgeExpired(now);
  await deps.store.idempotency.purgeExpired(now);
  await deps.store.consoleSessions.purgeExpired(now);
  // Events go only within WARDEN_RETENTION_HOURS. At its end the row-by-row removal stops between
  // two chunks and no other week's drop begins; a drop already begun is finished.
  const window = inRetentionHours(deps.config.retentionHours, now);
  if (window === undefined) {
    report.outsideHours?.();
    return noneRemoved();
  }
  const windowEnd = new AbortController();
  const closing = Number.isFinite(window.until)
    ? setTimeout(() => windowEnd.abort(), Math.max(0, window.until - deps.clock()))
    : undefined;
  closing?.unref();
  try {
    const removed = await removeExpiredEvents(deps, now, signal, windowEnd.signal, report);
    if (windowEnd.signal.aborted) report.windowEnded?.(removed);
    return removed;
  } finally {
    clearTimeout(closing);
  }
}

/** Each tenant's events older than its retention (housekeep). */
function removeExpiredEvents(
  deps: Deps,
  now: number,
  signal: AbortSignal | undefined,
  windowEnd: AbortSignal,
  report: HousekeepingReport,
): Promise<RemovedRows> {
  const shortest = Math.ceil(deps.config.idempotencyTtlHours / 24);
  return deps.store.removal.olderThan(
    async (tenantId) => {
      let record: Awaited<ReturnType<typeof deps.store.policies.current>>;
      try {
        record = await deps.store.policies.current(tenantId);
      } catch (err) {
        report.skipped?.(tenantId, err);
        return undefined;
      }
      const own = record ? storedRetentionDays(record.document) : undefined;
      const days = own === undefined ? deps.config.retentionDays : own === "forever" ? undefined : own;
      return days === undefined ? undefined : now - Math.max(days, shortest) * DAY_MS;
    },
    signal,
    windowEnd,
  );
}

/**
 * Runs `housekeep` once a minute. A pass still running when the next is due is not doubled (the first
 * pass after retention is turned on may remove a backlog of months). `stop` ends the timer, stops a
 * running pass between two chunks and resolves once it has.
 */
export function startHousekeeping(deps: Deps, log: FastifyBaseLogger): { stop(): Promise<void> } {
  const abort = new AbortController();
  let running: Promise<void> | undefined;
  const pass = async () => {
    try {
      const removed = await housekeep(deps, abort.signal, {
        skipped: (tenantId, err) =>
          log.warn({ err, tenantId }, "retention: tenant passed over (its policy could not be read)"),
        windowEnded: (removed) =>
          log.info(
            { removed },
            "retention: WARDEN_RETENTION_HOURS ended; the rest waits for the next window (a week whose drop began is finished)",
          ),
        partitions: (created, err) =>
          err === undefined
            ? log.info({ created }, "partitions: the coming weeks' events partitions created")
            : log.error(
                { err },
                "partitions: the coming weeks' events partitions could not be created; run `warden migrate` with the schema owner's role",
              ),
      });
      if (removed.events > 0) log.info({ removed }, "retention: old events removed");
    } catch (err) {
      log.warn({ err }, "housekeeping failed; will retry");
    }
  };
  const timer = setInterval(() => {
    if (running) return;
    running = pass().finally(() => {
      running = undefined;
    });
  }, HOUSEKEEPING_INTERVAL_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      abort.abort();
      await running;
    },
  };
}
