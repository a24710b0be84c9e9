import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { hashApiKey } from "../admin/apiKeys.js";
import { REHEARSAL_REQUESTS, rehearsalCaller } from "../operations/verify/rehearsal.js";
import type { Store } from "../store/interfaces.js";
import type { KnownCallers } from "./auth.js";

/** What the start-up warm-up did, for the log. */
export interface WarmUpReport {
  ms: number;
  /** Why the store could not open its connections, if it could not. */
  storeError?: unknown;
  /** Rehearsed verify requests, and how many did not answer a normal 200 verdict. */
  rehearsed: number;
  failed: number;
}

/**
 * Readies a built app before it listens: opens the store's connections (`Store.warmUp`), then sends
 * the rehearsal's verify requests (operations/verify/rehearsal.ts) through `app.inject`, with an API
 * key that exists only in this process's memory, only while they run. Nothing is written. A round
 * that fails (the store cannot answer its reads) ends the rehearsal: the next would fail alike.
 * Never rejects.
 */
export async function warmUp(
  app: FastifyInstance,
  store: Store,
  callers: KnownCallers,
  clock: () => number,
  rounds = 8,
): Promise<WarmUpReport> {
  const started = performance.now();
  const report: WarmUpReport = { ms: 0, rehearsed: 0, failed: 0 };
  try {
    await store.warmUp();
  } catch (err) {
    report.storeError = err;
  }
  const apiKey = `wdn_${randomBytes(32).toString("base64url")}`;
  const caller = rehearsalCaller(clock());
  callers.remember(hashApiKey(apiKey), caller);
  // The rehearsal's requests are not the service's traffic: their loggers (children made per request,
  // at the level of their making) log warnings only.
  const level = app.log.level;
  if (["trace", "debug", "info"].includes(level)) app.log.level = "warn";
  try {
    for (let round = 0; round < rounds && report.failed === 0; round++) {
      for (const [i, body] of REHEARSAL_REQUESTS.entries()) {
        const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
        // Every other request carries an idempotency key: its lookup is a real read that finds nothing.
        if ((round + i) % 2 === 0) headers["idempotency-key"] = `rehearsal-${round}-${i}`;
        const res = await app.inject({ method: "POST", url: "/v1/verify", headers, payload: body });
        report.rehearsed++;
        if (res.statusCode !== 200 || (res.json() as { degraded?: unknown }).degraded !== false) {
          report.failed++;
        }
      }
    }
  } catch {
    report.failed++;
  } finally {
    app.log.level = level;
    callers.forgetKey(caller.key.id);
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}

declare module "fastify" {
  interface FastifyInstance {
    /**
     * Opens the store's connections and rehearses verify without writing. Call it after `ready()`
     * and before `listen()`: `warden serve` does.
     */
    warmUp(): Promise<WarmUpReport>;
  }
}
