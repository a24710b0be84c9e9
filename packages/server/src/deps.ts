import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { WorkerChannel } from "./cluster/worker.js";
import { type Config, ConfigError } from "./config.js";
import { tracedStore } from "./observability/tracedStore.js";
import { Tracing } from "./observability/tracing.js";
import { DEFAULT_MODEL, type DecisionModel } from "./operations/verify/decisionModel.js";
import { PendingEvents } from "./operations/verify/pendingEvents.js";
import { HostingNetworks } from "./operations/verify/signals/hostingNetworks.js";
import { TenantPolicies } from "./policy/tenantPolicies.js";
import { type Store, StoreUnavailableError } from "./store/interfaces.js";
import { openPostgresStore } from "./store/postgres/postgresStore.js";
import { openRedisCounters, RedisTopologyError, withRedisCounters } from "./store/redis/redisCounters.js";
import { openSqliteStore, sqliteFileFromUrl } from "./store/sqlite/sqliteStore.js";
import { SigningKeyring } from "./tokens/signingKeys.js";
import { AgentRegistry } from "./webBotAuth/agentRegistry.js";

/** Everything the app needs from the outside, built once in one place (main, CLI, tests). */
export interface Deps {
  config: Config;
  store: Store;
  keyring: SigningKeyring;
  model: DecisionModel;
  tenantPolicies: TenantPolicies;
  agents: AgentRegistry;
  pendingEvents: PendingEvents;
  hosting: HostingNetworks;
  clock: () => number;
  /** OpenTelemetry traces, when the configuration turns them on (OTEL_TRACES_EXPORTER=otlp). */
  tracing: Tracing | undefined;
  /** Set in a worker of `warden serve --workers N`: its /metrics answers every worker's, added up. */
  worker?: WorkerChannel;
}

let sharedHosting: HostingNetworks | undefined;
/** The hosting-network data set, read once per process. */
export function hostingNetworks(): HostingNetworks {
  sharedHosting ??= HostingNetworks.load();
  return sharedHosting;
}

/**
 * Opens the store named by the configuration. `storeTimeoutMs` overrides the request-path deadline
 * (CLI); `migrate: false` only checks that the schema is current (`warden serve --no-migrate`).
 */
export async function openStore(
  config: Config,
  storeTimeoutMs = config.storeTimeoutMs,
  { migrate = true, runtimeRole }: { migrate?: boolean; runtimeRole?: string } = {},
): Promise<Store> {
  const store = config.databaseUrl.startsWith("sqlite:")
    ? await openSqliteStore({
        file: sqliteFileFromUrl(config.databaseUrl),
        busyTimeoutMs: storeTimeoutMs,
        migrate,
      })
    : await openPostgresStore({
        url: config.databaseUrl,
        migrate,
        ...(runtimeRole === undefined ? {} : { runtimeRole }),
        statementTimeoutMs: storeTimeoutMs,
        poolSize: config.pgPoolSize,
        poolMin: config.pgPoolMin,
        pooler: config.pgPooler,
        preparedStatements: config.pgPreparedStatements,
        patientTimeoutMs: Math.max(storeTimeoutMs, config.pgPatientTimeoutMs),
        readTimeoutMs: config.pgReadTimeoutMs,
        readConcurrency: config.pgReadConcurrency,
        readShare: config.pgReadSharePercent,
        ...(config.pgReadUrl === undefined ? {} : { readUrl: config.pgReadUrl }),
      });
  return withConfiguredCounters(config, store, storeTimeoutMs);
}

/**
 * Moves velocity counters and rate limits to Redis when WARDEN_REDIS_URL is set. A URL naming
 * another kind of Redis than the one that answers (a Cluster node behind redis://) is a
 * configuration error: the start fails, naming the setting, with the store closed.
 */
export async function withConfiguredCounters(
  config: Config,
  store: Store,
  storeTimeoutMs = config.storeTimeoutMs,
): Promise<Store> {
  if (config.redisUrl === undefined) return store;
  try {
    const counters = await openRedisCounters({
      url: config.redisUrl,
      commandTimeoutMs: storeTimeoutMs,
      keyPrefix: config.redisKeyPrefix,
    });
    return withRedisCounters(store, counters);
  } catch (err) {
    await store.close().catch(() => undefined);
    if (err instanceof RedisTopologyError)
      throw new ConfigError("WARDEN_REDIS_URL", err.message.replace(/^WARDEN_REDIS_URL /, ""));
    throw err;
  }
}

/** How long start-up reads may keep retrying a store that times out (many processes starting at once). */
const STARTUP_PATIENCE_MS = 15_000;

/**
 * Runs a start-up read, retrying while the store answers StoreUnavailableError: these statements run
 * under the request path's short statement timeout, which concurrent cold starts on one database
 * overrun. Past STARTUP_PATIENCE_MS the last error stands and the start fails.
 */
export async function duringStartup<T>(fn: () => Promise<T>): Promise<T> {
  const until = Date.now() + STARTUP_PATIENCE_MS;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof StoreUnavailableError) || Date.now() + wait > until) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

export interface BuildOptions {
  /** Where spans go instead of OTLP/HTTP (tests); only used when the configuration turns traces on. */
  traceExporter?: SpanExporter;
  /** The hosting-network data set; by default the one the package ships (tests pass an empty one). */
  hosting?: HostingNetworks;
}

export async function buildDeps(
  config: Config,
  store?: Store,
  clock: () => number = Date.now,
  options: BuildOptions = {},
): Promise<Deps> {
  const untraced = store ?? (await openStore(config));
  const tracing =
    config.tracing === undefined
      ? undefined
      : new Tracing(
          config.tracing,
          options.traceExporter === undefined ? {} : { exporter: options.traceExporter },
        );
  // Wrapped once, here: every store call made while a request is traced gets a span.
  const opened = tracing === undefined ? untraced : tracedStore(untraced, tracing);
  const keyring = new SigningKeyring(opened, config.signingKeyRefreshSeconds, clock);
  await duringStartup(() => keyring.start());
  const agents = new AgentRegistry(
    opened,
    config.policyRefreshSeconds,
    {
      enabled: config.agentDirectoryFetch,
      limits: {
        timeoutMs: config.agentDirectoryTimeoutMs,
        maxBytes: config.agentDirectoryMaxBytes,
        allowPrivate: config.agentDirectoryAllowPrivate,
      },
      minTtlSeconds: 60,
      maxTtlSeconds: 86_400,
    },
    { maxValiditySeconds: config.agentSignatureMaxValiditySeconds },
    clock,
  );
  await duringStartup(() => agents.start());
  const tenantPolicies = new TenantPolicies(opened, config.policyRefreshSeconds * 1000, clock);
  tenantPolicies.start();
  return {
    config,
    store: opened,
    keyring,
    model: DEFAULT_MODEL,
    tenantPolicies,
    pendingEvents: new PendingEvents(opened, { capacity: config.degradedQueueCapacity, retryMs: 1000 }),
    agents,
    hosting: options.hosting ?? hostingNetworks(),
    clock,
    tracing,
  };
}

export async function closeDeps(deps: Deps): Promise<void> {
  deps.keyring.stop();
  deps.agents.stop();
  deps.tenantPolicies.stop();
  deps.pendingEvents.stop();
  await deps.store.close();
  // The spans still buffered go to the collector (graceful shutdown), within the export timeout.
  await deps.tracing
    ?.shutdown()
    .catch((err: unknown) => deps.tracing?.report(err, "trace export failed at shutdown"));
}
