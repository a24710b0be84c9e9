import type { FastifyBaseLogger } from "fastify";
import type { Deps } from "./deps.js";
import type { RemovedRows } from "./store/interfaces.js";

const DAY_MS = 86_400_000;
/** How often a process runs its housekeeping. */
export const HOUSEKEEPING_INTERVAL_MS = 60_000;

/**
 * One pass: deletes expired counters, idempotency records and console sessions, then the events older
 * than WARDEN_RETENTION_DAYS with everything on them. Every deletion goes in chunks, so verify
 * interleaves. Resolves what retention removed (undefined when events are kept forever).
 */
export async function housekeep(deps: Deps, signal?: AbortSignal): Promise<RemovedRows | undefined> {
  const now = deps.clock();
  await deps.store.counters.purgeExpired(now);
  await deps.store.idempotency.purgeExpired(now);
  await deps.store.consoleSessions.purgeExpired(now);
  const days = deps.config.retentionDays;
  if (days === undefined) return undefined;
  return deps.store.removal.olderThan(now - days * DAY_MS, signal);
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
      const removed = await housekeep(deps, abort.signal);
      if (removed && removed.events > 0)
        log.info({ retentionDays: deps.config.retentionDays, removed }, "retention: old events removed");
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
