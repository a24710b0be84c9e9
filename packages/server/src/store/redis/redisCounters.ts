import { Cluster, Redis } from "ioredis";
import {
  type CounterHit,
  type CounterReading,
  type CounterStore,
  type Store,
  StoreUnavailableError,
} from "../interfaces.js";
import { connectRedis, probeTopology } from "./redisConnection.js";
import { parseRedisUrl } from "./redisTarget.js";

/**
 * Velocity counters and rate limits in Redis (WARDEN_REDIS_URL: one server, a Cluster, or a master
 * found through Sentinels), one Lua script per call (per tenant on a Cluster): for each
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
  /** One server, a Cluster or Sentinels (redisTarget.ts); validated by config.ts at start-up. */
  url: string;
  /** Deadline of one command (the request path's store deadline). */
  commandTimeoutMs: number;
  /** Prefix of every key (tests use their own). */
  keyPrefix?: string;
}

type HitCommand = {
  wardenHit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
};

export interface RedisCounters extends CounterStore {
  ping(): Promise<void>;
  /** Loads the counter script, so the first hit is not refused as unknown (NOSCRIPT) and sent again. */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

/** The URL names another kind of Redis than the one that answers (a Cluster node behind redis://…). */
export class RedisTopologyError extends Error {
  override name = "RedisTopologyError";
}

/**
 * The hash tag of a counter's keys: its tenant's, so that one request's counters (its rate limit and
 * velocity counters, all of one tenant) share a Cluster slot and stay one script, while tenants
 * spread over the masters. A counter of no tenant is tagged by its own name, so that its current
 * and previous buckets still share a slot. Tenant ids hold no brace (admin/apiKeys.ts).
 */
function hashTag(hit: CounterHit): string {
  return hit.tenantId === undefined ? `{n:${hit.name}}` : `{t:${hit.tenantId}}`;
}

/**
 * Connects (waiting at most `connectTimeout` for the first connection, so the first requests do not
 * degrade needlessly); an unreachable Redis does not stop the start: calls fail until it returns.
 * A URL that names the wrong kind of Redis does: it rejects with RedisTopologyError. Found later (the
 * Redis was unreachable at start, or changed since), every call fails with StoreUnavailableError
 * naming the problem, so counters stay in the store and /readyz/store reports it.
 */
export async function openRedisCounters(o: RedisCounterOptions): Promise<RedisCounters> {
  const target = parseRedisUrl(o.url);
  const client = connectRedis(target, {
    commandTimeoutMs: o.commandTimeoutMs,
    keyPrefix: o.keyPrefix ?? "warden:",
  });
  const cluster = client instanceof Cluster ? client : undefined;
  const redis = client as (Redis | Cluster) & HitCommand;
  redis.defineCommand("wardenHit", { lua: HIT_SCRIPT });
  // Errors surface on the commands; the connection's own events must not crash the process.
  client.on("error", () => undefined);
  client.on("node error", () => undefined);

  let problem: string | undefined;
  let probing: Promise<void> | undefined;
  const probe = (): Promise<void> => {
    probing ??= probeTopology(target)
      .then(
        (found) => {
          if (found.answered) problem = found.problem;
        },
        () => undefined,
      )
      .finally(() => {
        probing = undefined;
      });
    return probing;
  };
  // Every (re)connection asks again what answers: the first may come long after the start.
  client.on("ready", () => void probe());
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(1000, o.commandTimeoutMs));
    client.once("ready", done);
  });
  await probe();
  if (problem !== undefined) {
    client.disconnect();
    throw new RedisTopologyError(`WARDEN_REDIS_URL ${problem}`);
  }

  const guard = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    if (problem !== undefined) throw new StoreUnavailableError(`redis ${what}: WARDEN_REDIS_URL ${problem}`);
    try {
      return await fn();
    } catch (err) {
      throw new StoreUnavailableError(`redis ${what}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
  };
  // A Cluster serves the counters only with every slot's master: each is asked (a connection to a
  // lost node is dropped from the client's pool while its slots still name it).
  const masters = (): (Redis | Cluster)[] => {
    if (!cluster) return [client];
    if (cluster.status !== "ready") throw new Error(`the cluster is not ready (${cluster.status})`);
    const owners = new Set<string>();
    for (let slot = 0; slot < 16_384; slot++) {
      const owner = cluster.slots[slot]?.[0];
      if (owner === undefined) throw new Error(`slot ${slot} has no master`);
      owners.add(owner);
    }
    const connected = new Map(cluster.nodes("master").map((n) => [`${n.options.host}:${n.options.port}`, n]));
    return [...owners].map((owner) => {
      const node = connected.get(owner);
      if (node === undefined) throw new Error(`no connection to the master at ${owner}`);
      return node;
    });
  };

  return {
    hit: (hits: readonly CounterHit[], now: number) =>
      guard("counters.hit", async (): Promise<CounterReading[]> => {
        if (hits.length === 0) return [];
        // One script per hash tag on a Cluster (a script's keys must share a slot), else one script.
        const scripts = new Map<string, { keys: string[]; ttls: number[] }>();
        // A counter named twice in one call is hit once, and both readings are that hit's (the
        // CounterStore contract, as on SQL): the script would otherwise INCR it twice.
        const placed = new Map<string, { script: string; at: number }>();
        const places = hits.map((h) => {
          const counter = `${h.name}|${h.windowMs}`;
          let place = placed.get(counter);
          if (place === undefined) {
            const tag = hashTag(h);
            const script = cluster ? tag : "";
            const s = scripts.get(script) ?? { keys: [], ttls: [] };
            scripts.set(script, s);
            place = { script, at: s.ttls.length };
            placed.set(counter, place);
            const bucket = Math.floor(now / h.windowMs);
            s.keys.push(`${tag}c:${counter}:${bucket}`, `${tag}c:${counter}:${bucket - 1}`);
            // Relative to the caller's clock, so a process with a skewed clock still expires its keys.
            s.ttls.push((bucket + 2) * h.windowMs - now);
          }
          return place;
        });
        const outs = new Map(
          await Promise.all(
            [...scripts].map(
              async ([script, s]) =>
                [script, await redis.wardenHit(s.keys.length, ...s.keys, ...s.ttls)] as const,
            ),
          ),
        );
        return hits.map((h, i) => {
          const place = places[i] as { script: string; at: number };
          const out = outs.get(place.script) as number[];
          return {
            current: Number(out[2 * place.at]),
            previous: Number(out[2 * place.at + 1]),
            elapsed: (now - Math.floor(now / h.windowMs) * h.windowMs) / h.windowMs,
          };
        });
      }),
    // Keys expire by themselves.
    purgeExpired: async () => 0,
    ping: () =>
      guard("ping", async () => {
        await Promise.all(masters().map((m) => m.ping()));
      }),
    warmUp: () =>
      guard("warmUp", async () => {
        await Promise.all(masters().map((m) => m.script("LOAD", HIT_SCRIPT)));
      }),
    close: async () => {
      client.disconnect();
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
  let fallbacks = 0;
  /** Counts in Redis, or in `fallback` (the store's own counters) while Redis is down. */
  const hitFallingBackTo =
    (fallback: Pick<Store["counters"], "hit">): Store["counters"]["hit"] =>
    async (hits, now) => {
      if (clock() < redisDownUntil) {
        fallbacks++;
        return fallback.hit(hits, now);
      }
      try {
        return await counters.hit(hits, now);
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        redisDownUntil = clock() + REDIS_FALLBACK_MS;
        fallbacks++;
        return fallback.hit(hits, now);
      }
    };
  return {
    ...store,
    counters: {
      hit: hitFallingBackTo(store.counters),
      // What fell back to the store expires there like any store counter; Redis keys expire alone.
      purgeExpired: (now) => store.counters.purgeExpired(now),
    },
    patient: { ...store.patient, counters: { hit: hitFallingBackTo(store.patient.counters) } },
    counterFallbacks: () => fallbacks,
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
