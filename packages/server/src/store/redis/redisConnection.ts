import { Cluster, Redis, type RedisOptions } from "ioredis";
import { formatAddress, type RedisAddress, type RedisTarget } from "./redisTarget.js";

export interface ConnectionOptions {
  /** Deadline of one command (the request path's store deadline). */
  commandTimeoutMs: number;
  keyPrefix: string;
}

/**
 * A client for the target that fails fast: no offline queue, no retries of a command, a command
 * timeout of the store deadline. It reconnects in the background, quickly at first and at most
 * every 2 s; through Sentinel each reconnection asks the Sentinels for the current master, so a
 * failover costs the commands of the seconds it takes. Cluster commands follow MOVED and ASK
 * redirections as the slots move.
 */
export function connectRedis(target: RedisTarget, o: ConnectionOptions): Redis | Cluster {
  const retryStrategy = (times: number) => Math.min(times * 100, 2000);
  const common = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: o.commandTimeoutMs,
    connectTimeout: Math.max(1000, o.commandTimeoutMs),
  } satisfies RedisOptions;
  if (target.kind === "server") {
    return new Redis(target.url, { ...common, retryStrategy, keyPrefix: o.keyPrefix });
  }
  const credentials = {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.tls ? { tls: {} } : {}),
  };
  if (target.kind === "cluster") {
    return new Cluster(target.nodes, {
      enableOfflineQueue: false,
      clusterRetryStrategy: retryStrategy,
      keyPrefix: o.keyPrefix,
      slotsRefreshTimeout: Math.max(1000, o.commandTimeoutMs),
      redisOptions: { ...common, ...credentials },
    });
  }
  return new Redis({
    ...common,
    ...credentials,
    retryStrategy,
    keyPrefix: o.keyPrefix,
    sentinels: target.sentinels,
    name: target.masterName,
    db: target.db,
    ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
    ...(target.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    sentinelCommandTimeout: Math.max(1000, o.commandTimeoutMs),
    // A master demoted under us answers writes with READONLY: ask the Sentinels again.
    reconnectOnError: (err) => err.message.startsWith("READONLY"),
  });
}

/** What a probe found: nothing answered, the kind of Redis the URL says, or another kind. */
export type TopologyFinding = { answered: false } | { answered: true; problem?: string };

const PROBE_TIMEOUT_MS = 1000;

/**
 * Asks the configured hosts what they are (`INFO server`: redis_mode), on short-lived connections
 * of their own, so a URL naming the wrong kind of Redis is found before it costs a single verify:
 * a plain URL pointing at a Cluster node (keys of other nodes' slots answer MOVED, a script's keys
 * in several slots CROSSSLOT) or at a Sentinel, a cluster URL pointing at a lone server, Sentinels
 * that are not, or that monitor no master of that name. Resolves `answered: false` when no host
 * answers (an outage, not a misconfiguration).
 */
export async function probeTopology(target: RedisTarget): Promise<TopologyFinding> {
  const findings = await Promise.all(
    target.kind === "server"
      ? [probeOne(target.url, {}, (mode) => (mode === "standalone" ? undefined : serverProblem(mode)))]
      : target.kind === "cluster"
        ? target.nodes.map((node) =>
            probeOne(node, target, (mode) =>
              mode === "cluster"
                ? undefined
                : `names a Redis Cluster, but ${formatAddress(node)} is not a cluster node (redis_mode:${mode}): use redis://${formatAddress(node)} for one server`,
            ),
          )
        : target.sentinels.map((sentinel) =>
            probeOne(
              sentinel,
              {
                tls: target.tls,
                ...(target.sentinelPassword === undefined ? {} : { password: target.sentinelPassword }),
              },
              (mode) =>
                mode === "sentinel"
                  ? undefined
                  : `names Sentinels, but ${formatAddress(sentinel)} is not one (redis_mode:${mode})`,
              async (client) =>
                (await client.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", target.masterName)) === null
                  ? `names the master "${target.masterName}", which the Sentinel at ${formatAddress(sentinel)} does not monitor`
                  : undefined,
            ),
          ),
  );
  const problem = findings.find((f) => f.answered && f.problem !== undefined);
  return problem ?? findings.find((f) => f.answered) ?? { answered: false };
}

function serverProblem(mode: string): string {
  return mode === "cluster"
    ? "points at a Redis Cluster node (redis_mode:cluster), where a script's keys on other nodes answer MOVED: name the cluster as redis+cluster://host:port[,host:port…]"
    : `points at a Redis in ${mode} mode, not a server: name Sentinels as redis+sentinel://host:26379[,host:port…]/<master name>`;
}

async function probeOne(
  at: string | RedisAddress,
  auth: { username?: string; password?: string; tls?: boolean },
  judge: (mode: string) => string | undefined,
  more?: (client: Redis) => Promise<string | undefined>,
): Promise<TopologyFinding> {
  const options = {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    commandTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableReadyCheck: false,
    ...(auth.username === undefined ? {} : { username: auth.username }),
    ...(auth.password === undefined ? {} : { password: auth.password }),
    ...(auth.tls ? { tls: {} } : {}),
  } satisfies RedisOptions;
  const client =
    typeof at === "string" ? new Redis(at, { ...options, db: 0 }) : new Redis({ ...at, ...options });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const info = await client.info("server");
    const mode = /^redis_mode:(\w+)/m.exec(info)?.[1] ?? "standalone";
    const problem = judge(mode) ?? (more ? await more(client) : undefined);
    return problem === undefined ? { answered: true } : { answered: true, problem };
  } catch {
    return { answered: false };
  } finally {
    client.disconnect();
  }
}
