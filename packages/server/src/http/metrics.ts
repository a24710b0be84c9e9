import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { PendingEvents } from "../operations/verify/pendingEvents.js";
import type { Verdict } from "../operations/verify/schema.js";
import { type CallWrapper, wrapEveryCall } from "../store/everyCall.js";
import type { Store } from "../store/interfaces.js";
import { RecentVerdicts } from "./recentVerdicts.js";

/**
 * Prometheus metrics for one app instance (its own registry). Labels are bounded: route templates,
 * methods, statuses, decisions and store call names; never tenants, keys or sessions.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Counts one verify answer by decision, degraded, enforcement mode and challengeCleared. */
  verdict(v: Verdict): void;
  /** The store with every call timed (warden_store_call_duration_seconds{call,outcome}). */
  timed(store: Store): Store;
  /** Registers request counting and timing on the app. */
  instrument(app: FastifyInstance): void;
  /** Zeroes the request and verdict metrics: after the start-up rehearsal, so they count real requests. */
  resetRequests(): void;
  /** This process's verify answers of the last minute (readiness reads them). */
  readonly recent: RecentVerdicts;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createMetrics(
  pending: Pick<PendingEvents, "size" | "dropped" | "rejected" | "erased" | "written">,
  store?: Pick<Store, "counterFallbacks">,
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "warden_" });
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge(
    "warden_degraded_events_pending",
    "Events of degraded verdicts waiting in memory for the store",
    () => pending.size,
  );
  gauge(
    "warden_degraded_events_dropped",
    "Events of degraded verdicts dropped because the pending queue was full (since start)",
    () => pending.dropped,
  );
  gauge(
    "warden_degraded_events_rejected",
    "Events of degraded verdicts the store refused for what they hold, dropped instead of retried (since start)",
    () => pending.rejected,
  );
  gauge(
    "warden_degraded_events_erased",
    "Events of degraded verdicts not written because `warden erase` removed their subject after they were made (since start)",
    () => pending.erased,
  );
  gauge(
    "warden_redis_fallback_calls",
    "Counter calls Redis failed or answered past the store timeout, counted in the store instead (since start): meanwhile a key's rate limit and velocity counts are split between Redis and the store",
    () => store?.counterFallbacks?.() ?? 0,
  );
  const requests = new Counter({
    name: "warden_http_requests_total",
    help: "HTTP requests by route template, method and status",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "warden_http_request_duration_seconds",
    help: "HTTP request latency by route template and method",
    labelNames: ["route", "method"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const decisions = new Counter({
    name: "warden_verify_decisions_total",
    help: "Verify answers by decision, degraded flag, enforcement mode and challengeCleared",
    labelNames: ["decision", "degraded", "enforcement_mode", "challenge_cleared"] as const,
    registers: [registry],
  });
  const recent = new RecentVerdicts();
  new Gauge({
    name: "warden_verify_degraded_ratio",
    help: "Share of this process's verify answers of the last 60 s that were degraded (0 without answers; the worst process under --workers)",
    aggregator: "max",
    registers: [registry],
    collect() {
      const { answers, degraded } = recent.over(60);
      this.set(answers === 0 ? 0 : degraded / answers);
    },
  });
  const storeCalls = new Histogram({
    name: "warden_store_call_duration_seconds",
    help: "Store call latency by call and outcome (ok or error)",
    labelNames: ["call", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });

  const timeCall: CallWrapper =
    (call, fn) =>
    async (...args) => {
      const started = performance.now();
      try {
        const result = await fn(...args);
        storeCalls.observe({ call, outcome: "ok" }, (performance.now() - started) / 1000);
        return result;
      } catch (err) {
        storeCalls.observe({ call, outcome: "error" }, (performance.now() - started) / 1000);
        throw err;
      }
    };

  return {
    registry,
    verdict: (v) => {
      decisions.inc({
        decision: v.decision,
        degraded: String(v.degraded),
        enforcement_mode: v.enforcementMode,
        challenge_cleared: String(v.challengeCleared === true),
      });
      recent.record(v.degraded);
    },
    recent,
    timed: (store) => wrapEveryCall(store, timeCall),
    resetRequests: () => {
      requests.reset();
      duration.reset();
      decisions.reset();
      recent.reset();
    },
    instrument: (app) => {
      app.addHook("onResponse", async (request, reply) => {
        const route = request.routeOptions.url ?? "unmatched";
        requests.inc({ route, method: request.method, status: String(reply.statusCode) });
        duration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
      });
    },
  };
}
