import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { percentile } from "./steadyLoad.js";
import { body } from "./verifyLoad.js";

/** What one closed-loop level measured: the share of degraded verdicts and latencies in ms. */
const IDEMPOTENT = process.env.BENCH_IDEMPOTENT === "1";

export interface BurstRun {
  concurrency: number;
  requests: number;
  degraded: number;
  non200: number;
  errors: number;
  p50: number;
  p99: number;
}

/**
 * Closed loop at a fixed concurrency: `concurrency` callers each send a verify, wait for its answer
 * and send the next, `perCaller` times, every request from its own /24 (body()). This is the issue's
 * "burst of N simultaneous signups", repeated; it counts degraded verdicts, which a healthy store
 * should never give at the concurrency a small deployment sees.
 */
export async function burst(
  target: { url: string; apiKey: string },
  concurrency: number,
  perCaller: number,
): Promise<BurstRun> {
  const pool = new Pool(target.url, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const headers = { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" };
  const latencies: number[] = [];
  let degraded = 0;
  let non200 = 0;
  let errors = 0;
  const caller = async () => {
    for (let i = 0; i < perCaller; i++) {
      const sentAt = performance.now();
      try {
        const res = await pool.request({
          path: "/v1/verify",
          method: "POST",
          headers: IDEMPOTENT ? { ...headers, "idempotency-key": randomUUID() } : headers,
          body: body(),
        });
        const text = await res.body.text();
        latencies.push(performance.now() - sentAt);
        if (res.statusCode !== 200) non200++;
        else if ((JSON.parse(text) as { degraded?: boolean }).degraded) degraded++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  await pool.close();
  latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    concurrency,
    requests: concurrency * perCaller,
    degraded,
    non200,
    errors,
    p50: round(percentile(latencies, 0.5)),
    p99: round(percentile(latencies, 0.99)),
  };
}
