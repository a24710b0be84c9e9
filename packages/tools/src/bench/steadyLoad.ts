import { performance } from "node:perf_hooks";
import { Pool } from "undici";

/** One endpoint to send requests to: a fresh body per request. */
export interface Endpoint {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: () => string;
}

/** What one load run measured: latencies in milliseconds. */
export interface Run {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Steady runs only: answers that were verify's degraded challenge. */
  degraded?: number;
  /** Steady runs only: p99 of how late the generator sent a request after it was due, in ms. */
  lateP99?: number;
}

/** How many connections each endpoint may open: enough that the generator never waits for one. */
const MAX_CONNECTIONS = 128;

/** The p-th percentile (0..1) of ascending samples, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1] as number;
}

/**
 * Open-loop load at a steady rate: request i is due at start + i / rate and is sent then, whether or
 * not earlier ones have answered, so a server that falls behind cannot slow the load down (no
 * coordinated omission). The pool never runs out of connections at these rates; if it did, the wait
 * for one would count, because latency runs from the moment the request is handed to the client.
 * Timers fire at millisecond granularity, so a request leaves up to about a millisecond after it was
 * due; that lateness is reported separately (lateP99) rather than charged to the server.
 * Requests go round-robin over the endpoints.
 *
 * Why not autocannon's `overallRate`: it lets each connection send its whole per-second quota as
 * fast as it can at the start of every second and then idle, so "half of peak" would be full-speed
 * bursts for half of each second. autocannon still measures peak (closed-loop) throughput.
 */
export async function steadyLoad(endpoints: Endpoint[], seconds: number, rate: number): Promise<Run> {
  const targets = endpoints.map((endpoint) => ({
    endpoint,
    pool: new Pool(endpoint.origin, {
      connections: MAX_CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: 60_000,
    }),
  }));
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies: number[] = [];
  const late: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let degraded = 0;
  let lastDone = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now() + 20;
  let sent = 0;

  const send = (i: number) => {
    const sentAt = performance.now();
    late.push(sentAt - (start + (i * 1000) / rate));
    const { endpoint, pool } = targets[i % targets.length] as (typeof targets)[number];
    return pool
      .request({ path: endpoint.path, method: "POST", headers: endpoint.headers, body: endpoint.body() })
      .then(async (res) => {
        const text = await res.body.text();
        lastDone = performance.now();
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
        else latencies.push(lastDone - sentAt);
        if (text.includes('"degraded":true')) degraded++;
      })
      .catch(() => {
        errors++;
      });
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - start;
      const due = Math.min(total, elapsed < 0 ? 0 : Math.floor((elapsed * rate) / 1000) + 1);
      while (sent < due) pending.push(send(sent++));
      if (sent < total) setTimeout(tick, Math.max(0, Math.min(1, -elapsed)));
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
  await Promise.all(targets.map((t) => t.pool.close()));

  latencies.sort((a, b) => a - b);
  late.sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    rps: (latencies.length * 1000) / Math.max(1, lastDone - start),
    p50: round(percentile(latencies, 0.5)),
    p99: round(percentile(latencies, 0.99)),
    non2xx,
    errors,
    degraded,
    lateP99: round(percentile(late, 0.99)),
  };
}
