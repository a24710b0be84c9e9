import { Redis } from "ioredis";
import {
  type CounterHit,
  type CounterReading,
  type CounterStore,
  type Store,
  StoreUnavailableError,
} from "../interfaces.js";

/**
 * Velocity counters and rate limits in Redis (WARDEN_REDIS_URL), one Lua script per call: for each
 * counter, INCR the current fixed bucket (expiring at the end of the next bucket, the last moment it
 * is read as "previous") and read the previous bucket. A script runs atomically, so concurrent hits
 * from many processes are never lost. Commands fail fast: no offline queue, no retries, a command
 * timeout of the store deadline; every failure is a StoreUnavailableError (verify then degrades).
 */
const HIT_SCRIPT = `
local out = {}
for i = 1, #KEYS, 2 do
  local current = redis.call('INCR', KEYS[i])
  if current == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[(i + 1) / 2]) end
  out[#out + 1] = current
  out[#out + 1] = tonumber(redis.call('GET', KEYS[i + 1]) or '0')
end
return out
`;

export interface RedisCounterOptions {
  url: string;
  /** Deadline of one command (the request path's store deadline). */
  commandTimeoutMs: number;
  /** Prefix of every key (tests use their own). */
  keyPrefix?: string;
}

type WithHit = Redis & { wardenHit(numKeys: number, ...args: (string | number)[]): Promise<number[]> };

export interface RedisCounters extends CounterStore {
  ping(): Promise<void>;
  /** Loads the counter script, so the first hit is not refused as unknown (NOSCRIPT) and sent again. */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects (waiting at most `connectTimeout` for the first connection, so the first requests do not
 * degrade needlessly); an unreachable Redis does not stop the start: calls fail until it returns.
 */
export async function openRedisCounters(o: RedisCounterOptions): Promise<RedisCounters> {
  const redis = new Redis(o.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: o.commandTimeoutMs,
    connectTimeout: Math.max(1000, o.commandTimeoutMs),
    // Reconnect in the background, quickly at first, at most every 2 s.
    retryStrategy: (times) => Math.min(times * 100, 2000),
    keyPrefix: o.keyPrefix ?? "warden:",
  }) as WithHit;
  redis.defineCommand("wardenHit", { lua: HIT_SCRIPT });
  // Errors surface on the commands; the connection's own events must not crash the process.
  redis.on("error", () => undefined);
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(1000, o.commandTimeoutMs));
    redis.once("ready", done);
  });

  const guard = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new StoreUnavailableError(`redis ${what}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
  };

  return {
    hit: (hits: readonly CounterHit[], now: number) =>
      guard("counters.hit", async (): Promise<CounterReading[]> => {
        if (hits.length === 0) return [];
        const keys: string[] = [];
        const ttls: number[] = [];
        // A counter named twice in one call is hit once, and both readings are that hit's (the
        // CounterStore contract, as on SQL): the script would otherwise INCR it twice.
        const slot = new Map<string, number>();
        const slots = hits.map((h) => {
          const counter = `${h.name}|${h.windowMs}`;
          let at = slot.get(counter);
          if (at === undefined) {
            at = ttls.length;
            slot.set(counter, at);
            const bucket = Math.floor(now / h.windowMs);
            keys.push(`c:${counter}:${bucket}`, `c:${counter}:${bucket - 1}`);
            // Relative to the caller's clock, so a process with a skewed clock still expires its keys.
            ttls.push((bucket + 2) * h.windowMs - now);
          }
          return at;
        });
        const out = await redis.wardenHit(keys.length, ...keys, ...ttls);
        return hits.map((h, i) => {
          const at = slots[i] as number;
          return {
            current: Number(out[2 * at]),
            previous: Number(out[2 * at + 1]),
            elapsed: (now - Math.floor(now / h.windowMs) * h.windowMs) / h.windowMs,
          };
        });
      }),
    // Keys expire by themselves.
    purgeExpired: async () => 0,
    ping: () =>
      guard("ping", async () => {
        await redis.ping();
      }),
    warmUp: () =>
      guard("warmUp", async () => {
        await redis.script("LOAD", HIT_SCRIPT);
      }),
    close: async () => {
      redis.disconnect();
    },
  };
}

/** After Redis failed, how long counters go straight to the store before Redis is tried again. */
export const REDIS_FALLBACK_MS = 5_000;

/**
 * The store with its counters (velocity and rate limits) in Redis; readiness covers both. While Redis
 * fails (an error or its command timeout), counters fall back to the store's own (SQL) counters for
 * REDIS_FALLBACK_MS at a time, so a Redis outage costs verify one degraded answer per process and
 * window instead of every answer. Counts made during the outage stay in the store: velocity and rate
 * limits start afresh there, and again in Redis when it is back (their windows are at most a day).
 */
export function withRedisCounters(
  store: Store,
  counters: RedisCounters,
  clock: () => number = Date.now,
): Store {
  let redisDownUntil = 0;
  const hit: Store["counters"]["hit"] = async (hits, now) => {
    if (clock() < redisDownUntil) return store.counters.hit(hits, now);
    try {
      return await counters.hit(hits, now);
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      redisDownUntil = clock() + REDIS_FALLBACK_MS;
      return store.counters.hit(hits, now);
    }
  };
  return {
    ...store,
    counters: {
      hit,
      // What fell back to the store expires there like any store counter; Redis keys expire alone.
      purgeExpired: (now) => store.counters.purgeExpired(now),
    },
    ping: async () => {
      await Promise.all([store.ping(), counters.ping()]);
    },
    warmUp: async () => {
      await Promise.all([store.warmUp(), counters.warmUp()]);
    },
    close: async () => {
      await counters.close();
      await store.close();
    },
  };
}

/** Whether a Redis answers PING within a second (tests and the bench decide whether to use it). */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
