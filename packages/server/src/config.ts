import os from "node:os";
import path from "node:path";
import { distance } from "fastest-levenshtein";
import ipaddr from "ipaddr.js";
import { RETENTION_DAYS_RANGE } from "./domain.js";
import { parseRedisUrl, RedisUrlError } from "./store/redis/redisTarget.js";

/**
 * The only reader of process.env. Every setting is parsed and validated once, at start-up, and the
 * result is frozen. A bad value stops the process with a message that names the variable.
 */
export interface Config {
  readonly databaseUrl: string;
  readonly host: string;
  readonly port: number;
  readonly logLevel: string;
  /** Request body byte cap; larger bodies get 413 payload_too_large. */
  readonly bodyLimitBytes: number;
  /** Requests allowed per API key and operation in one rate-limit window. */
  readonly rateLimitMax: number;
  readonly rateLimitWindowSeconds: number;
  /** Rows an API key's console reads may answer per minute in one process (CSV exports, lists, tables). */
  readonly readRowsPerMinute: number;
  /** Each API key's console reads per minute in one process, in seconds of the store's time. */
  readonly readStoreSecondsPerMinute: number;
  /** verdictToken `iss` claim: a constant issuer identifier. */
  readonly tokenIssuer: string;
  /** verdictToken `aud` claim. */
  readonly tokenAudience: string;
  readonly tokenTtlSeconds: number;
  /** Overall deadline of one verify; past it the answer is the degraded challenge. */
  readonly verifyDeadlineMs: number;
  /** Deadline of one store call made on a request path (SQLite: busy timeout). */
  readonly storeTimeoutMs: number;
  readonly idempotencyTtlHours: number;
  /**
   * Events older than this many days are removed with everything on them (challenges, clears,
   * feedback, resolutions, stored answers) by every process's housekeeping; undefined keeps them forever.
   */
  readonly retentionDays: number | undefined;
  /**
   * The UTC hours in which housekeeping removes events (row by row, and the drop of a whole week on
   * PostgreSQL): [from, to), wrapping past midnight when from > to; undefined is every hour.
   */
  readonly retentionHours: RetentionHours | undefined;
  /** Connections per process to PostgreSQL (ignored for SQLite). */
  readonly pgPoolSize: number;
  /** Connections of that pool opened at start-up and kept open while idle. */
  readonly pgPoolMin: number;
  /**
   * What stands between Warden and PostgreSQL: "none" (a direct connection, or a pooler that passes
   * connection parameters through) or "transaction" (a pooler that lends a server connection for one
   * transaction at a time and refuses other startup parameters: PgBouncer in transaction mode).
   */
  readonly pgPooler: PgPooler;
  /**
   * Hot statements as named prepared statements on PostgreSQL. Default: on without a pooler, off
   * behind a transaction pooler (on again only for one that keeps them: PgBouncer 1.21+ with
   * max_prepared_statements).
   */
  readonly pgPreparedStatements: boolean;
  /** PostgreSQL statement timeout off verify's path (feedback, challenges, administration). */
  readonly pgPatientTimeoutMs: number;
  /** PostgreSQL statement timeout of long reads (console aggregates, ledger totals). */
  readonly pgReadTimeoutMs: number;
  /** A PostgreSQL server (a streaming replica) for the console's long reads; undefined: the primary's. */
  readonly pgReadUrl: string | undefined;
  /** The console's long reads running at once on that server, across every process reading it. */
  readonly pgReadConcurrency: number;
  /** The share of its time each of those read slots may spend reading, in percent (the rest idle). */
  readonly pgReadSharePercent: number;
  /**
   * Redis for velocity counters and rate limits (one server, a Cluster, or a master found through
   * Sentinels: store/redis/redisTarget.ts); undefined keeps them in the store.
   */
  readonly redisUrl: string | undefined;
  /** Prefix of Warden's Redis keys, so deployments can share one Redis. */
  readonly redisKeyPrefix: string;
  /** How often a process reloads the published signing keys (rotation by another process). */
  readonly signingKeyRefreshSeconds: number;
  /** Lifetime of an issued challenge (expiresAt − issue time). */
  readonly challengeTtlSeconds: number;
  /** How long an operator console sign-in lasts. */
  readonly consoleSessionHours: number;
  /** Console sign-ins per client address and minute, wrong keys included. */
  readonly consoleSignInsPerMinute: number;
  /** How long after a clear a re-verify may redeem it. */
  readonly clearWindowSeconds: number;
  /** Base URL of the payment provider's API (Stripe); tests point it at a local server. */
  readonly paymentApiBase: URL;
  /**
   * Addresses or CIDR ranges of the proxies in front of Warden (a TLS-terminating balancer): from
   * them, X-Forwarded-For names the client (console sign-in limits) and X-Forwarded-Proto the
   * protocol (the console cookie is Secure behind TLS). Empty: the socket's peer is the client.
   */
  readonly trustedProxies: readonly string[];
  /**
   * The admin listener (metrics, API docs, console) when set: those paths then answer only there,
   * and 404 on the public PORT.
   */
  readonly adminPort: number | undefined;
  readonly adminHost: string;
  /** Host names the admin routes answer to besides addresses, localhost and one-label names (http/adminHosts.ts). */
  readonly adminHosts: AdminHosts;
  /** Deadline of one call to the payment provider. */
  readonly paymentTimeoutMs: number;
  /** How often a process reloads tenant policies and the agent registry (changes by another process). */
  readonly policyRefreshSeconds: number;
  /** Whether key directories of operators registered with --fetch-directory are fetched. */
  readonly agentDirectoryFetch: boolean;
  readonly agentDirectoryTimeoutMs: number;
  readonly agentDirectoryMaxBytes: number;
  /** The longest created-to-expires window accepted in a Web Bot Auth signature (a replay window). */
  readonly agentSignatureMaxValiditySeconds: number;
  /** Degraded verdicts' events that may wait in memory for the store (oldest dropped beyond). */
  readonly degradedQueueCapacity: number;
  /** Where degraded events the store did not take before shutdown are written, and read back at start. */
  readonly degradedSpoolDir: string;
  /** Lets directory fetches reach private and loopback addresses: for tests only. */
  readonly agentDirectoryAllowPrivate: boolean;
  /** A client must send a request's headers within this time of connecting (or of its previous request). */
  readonly headersTimeoutMs: number;
  /** A client must send a whole request (headers and body) within this time: slow bodies are cut. */
  readonly requestTimeoutMs: number;
  /** A connection with no traffic for this long is closed (idle keep-alive connections sooner). */
  readonly idleTimeoutMs: number;
  /** How long an idle keep-alive connection stays open for the client's next request. */
  readonly keepAliveTimeoutMs: number;
  /** Sockets one listener holds at once; at it idle or stalled ones give way (http/connectionGuard.ts). */
  readonly maxConnections: number;
  /** Sockets one client (IPv4 address, IPv6 /64) may hold at once (a load balancer is one: raise it there). */
  readonly maxConnectionsPerAddress: number;
  /** On SIGTERM, requests still open after this long are cut and the process exits. */
  readonly shutdownGraceMs: number;
  /**
   * Processes `warden serve` runs, sharing PORT (node:cluster): 1 serves in the process itself;
   * more start a primary that forks, restarts and stops that many workers.
   */
  readonly workers: number;
  /**
   * With more than one worker: the wait before replacing a worker that died within 30 s of its
   * start; it doubles with each such death, up to 30 s.
   */
  readonly workerRestartBackoffMs: number;
  /** OpenTelemetry traces sent over OTLP/HTTP; undefined (the default) creates no tracer at all. */
  readonly tracing: TracingConfig | undefined;
}

export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
export const TRACE_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/** Where and how spans go, from the OpenTelemetry SDK's standard variables (observability/tracing.ts). */
export interface TracingConfig {
  /** The full URL spans are POSTed to (…/v1/traces). */
  readonly endpoint: URL;
  readonly protocol: OtlpProtocol;
  /** Sent with every export (a collector's credentials): never logged, never echoed in an error. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly serviceName: string;
  readonly sampler: TraceSampler;
  /** The ratio of the traceidratio samplers, 0 to 1. */
  readonly samplerRatio: number;
}

export const PG_POOLERS = ["none", "transaction"] as const;
export type PgPooler = (typeof PG_POOLERS)[number];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function text(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = raw.trim();
  if (value === "") throw new ConfigError(name, "must not be empty");
  return value;
}

function url(env: Env, name: string, fallback: string): URL {
  const value = text(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${value}"`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new ConfigError(name, `must be an http(s) URL, got "${value}"`);
  }
  return parsed;
}

/**
 * Host names the operator's surfaces answer to besides IP addresses, localhost and one-label names
 * (http/adminHosts.ts), or "*" for any.
 */
export type AdminHosts = readonly string[] | "*";

/** Reads WARDEN_ADMIN_HOSTS: `*`, or comma-separated host names (no ports); why not, when it is neither. */
export function parseAdminHosts(raw: string | undefined): { hosts: AdminHosts } | { error: string } {
  const value = raw?.trim();
  if (!value) return { hosts: [] };
  if (value === "*") return { hosts: "*" };
  const hosts: string[] = [];
  for (const entry of value.split(",")) {
    const name = entry.trim().toLowerCase().replace(/\.$/, "");
    if (
      !/^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(
        name,
      )
    ) {
      return { error: `"${entry.trim()}" is not a host name (list names without ports, or * for any)` };
    }
    hosts.push(name);
  }
  return { hosts };
}

/** WARDEN_ADMIN_HOSTS: `*`, or comma-separated host names the admin routes answer to. */
function adminHosts(env: Env): AdminHosts {
  const parsed = parseAdminHosts(env.WARDEN_ADMIN_HOSTS);
  if ("error" in parsed) throw new ConfigError("WARDEN_ADMIN_HOSTS", parsed.error);
  return parsed.hosts;
}

/** WARDEN_TRUSTED_PROXIES: comma-separated IPv4/IPv6 addresses or CIDR ranges. */
function trustedProxies(env: Env): string[] {
  const raw = env.WARDEN_TRUSTED_PROXIES?.trim();
  if (!raw) return [];
  return raw.split(",").map((entry) => {
    const value = entry.trim();
    const [address = "", bits] = value.split("/");
    const valid = bits === undefined ? ipaddr.isValid(address) : ipaddr.isValidCIDR(value);
    if (!valid) {
      throw new ConfigError("WARDEN_TRUSTED_PROXIES", `"${value}" is not an IP address or CIDR range`);
    }
    return value;
  });
}

/** The default retention: 180 days (docs/configuration.md says why). */
export const DEFAULT_RETENTION_DAYS = 180;

/**
 * WARDEN_RETENTION_DAYS: whole days, or "forever". An event must outlive the keys that replay it: a
 * retry under a key whose event was removed would otherwise be decided and recorded afresh.
 */
function retentionDays(env: Env, idempotencyTtlHours: number): number | undefined {
  const raw = env.WARDEN_RETENTION_DAYS?.trim().toLowerCase();
  if (raw === undefined || raw === "") return DEFAULT_RETENTION_DAYS;
  if (raw === "forever") return undefined;
  const min = Math.max(RETENTION_DAYS_RANGE.min, Math.ceil(idempotencyTtlHours / 24));
  const days = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(days >= min && days <= RETENTION_DAYS_RANGE.max))
    throw new ConfigError(
      "WARDEN_RETENTION_DAYS",
      `must be a whole number of days from ${min} (a week, and no shorter than WARDEN_IDEMPOTENCY_TTL_HOURS) to ${RETENTION_DAYS_RANGE.max}, or "forever", got "${env.WARDEN_RETENTION_DAYS}"`,
    );
  return days;
}

/** A daily window of whole UTC hours: from `from`:00 up to `to`:00, past midnight when from > to. */
export interface RetentionHours {
  readonly from: number;
  readonly to: number;
}

/**
 * WARDEN_RETENTION_HOURS: "H-H" in UTC (e.g. "2-5", or "22-4" across midnight); empty, or "0-24",
 * is every hour.
 */
function retentionHours(env: Env): RetentionHours | undefined {
  const raw = env.WARDEN_RETENTION_HOURS?.trim();
  if (raw === undefined || raw === "") return undefined;
  const m = /^(\d{1,2})\s*-\s*(\d{1,2})$/.exec(raw);
  const [from, to] = m ? [Number(m[1]), Number(m[2])] : [Number.NaN, Number.NaN];
  if (from === 0 && to === 24) return undefined;
  if (!(from >= 0 && from <= 23 && to >= 0 && to <= 24 && from !== to % 24))
    throw new ConfigError(
      "WARDEN_RETENTION_HOURS",
      `must be a window of UTC hours "from-to" (from 0–23, to 0–24, not the same hour; "22-4" runs across midnight; "0-24" or no value is every hour), got "${env.WARDEN_RETENTION_HOURS}"`,
    );
  return { from, to: to % 24 };
}

/** Whether `at` (epoch ms) falls in the window, and if it does, when the window ends. */
export function inRetentionHours(
  hours: RetentionHours | undefined,
  at: number,
): { until: number } | undefined {
  if (hours === undefined) return { until: Number.POSITIVE_INFINITY };
  const hour = new Date(at).getUTCHours();
  const inside =
    hours.from < hours.to ? hour >= hours.from && hour < hours.to : hour >= hours.from || hour < hours.to;
  if (!inside) return undefined;
  const end = new Date(at);
  end.setUTCHours(hours.to, 0, 0, 0);
  const until = end.getTime() <= at ? end.getTime() + 86_400_000 : end.getTime();
  return { until };
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

function redisUrl(env: Env): string | undefined {
  const raw = env.WARDEN_REDIS_URL?.trim();
  if (raw === undefined || raw === "") return undefined;
  try {
    parseRedisUrl(raw);
  } catch (err) {
    if (err instanceof RedisUrlError) throw new ConfigError("WARDEN_REDIS_URL", err.message);
    throw err;
  }
  return raw;
}

function redisKeyPrefix(env: Env, url: string | undefined): string {
  const prefix = text(env, "WARDEN_REDIS_KEY_PREFIX", "warden:");
  // Keys carry a hash tag per tenant ({t:<tenant>}); a brace in the prefix would put every key of
  // the deployment into one slot of the cluster.
  if (url !== undefined && parseRedisUrl(url).kind === "cluster" && /[{}]/.test(prefix))
    throw new ConfigError(
      "WARDEN_REDIS_KEY_PREFIX",
      `must not contain { or } with a Redis Cluster (it would put every key on one node), got "${prefix}"`,
    );
  return prefix;
}

function pgPooler(env: Env): PgPooler {
  const value = text(env, "WARDEN_PG_POOLER", "none").toLowerCase();
  const known = PG_POOLERS.find((p) => p === value);
  if (known === undefined)
    throw new ConfigError(
      "WARDEN_PG_POOLER",
      `must be one of ${PG_POOLERS.join(", ")}, got "${env.WARDEN_PG_POOLER}"`,
    );
  return known;
}

/** The most workers one `warden serve` forks. */
export const MAX_WORKERS = 256;

/**
 * A worker count as WARDEN_WORKERS or `--workers` gives it: a whole number, or `auto`. On SQLite
 * more than one is refused: every write batch waits for the database's one write lock, and the wait
 * blocks the waiting process's event loop (SQLite's busy handler is synchronous), so workers slow
 * each other down (docs/benchmarks.md, Workers); `auto` is then 1. On PostgreSQL `auto` is one per
 * core this process may use (os.availableParallelism()). Throws ConfigError naming `name`.
 */
export function parseWorkers(raw: string, name: string, databaseUrl: string): number {
  const value = raw.trim().toLowerCase();
  const sqlite = databaseUrl.startsWith("sqlite:");
  if (value === "auto") return sqlite ? 1 : Math.min(MAX_WORKERS, Math.max(1, os.availableParallelism()));
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `must be a whole number or auto, got "${raw}"`);
  const n = Number(value);
  if (n < 1 || n > MAX_WORKERS) throw new ConfigError(name, `must be between 1 and ${MAX_WORKERS}, got ${n}`);
  if (n > 1 && sqlite)
    throw new ConfigError(
      name,
      `more than one worker needs PostgreSQL (WARDEN_DATABASE_URL=postgres://…), got ${n} on SQLite: its one write lock makes workers wait on each other (docs/deployment.md, Workers)`,
    );
  return n;
}

/** The OTLP/HTTP default endpoint of the OpenTelemetry specification (a collector on this host). */
const OTLP_DEFAULT_ENDPOINT = "http://localhost:4318";

/**
 * OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated by commas, values percent-encoded (the
 * OpenTelemetry specification's format). Errors name the entry's position, never its text: a header
 * value is usually a credential.
 */
function otlpHeaders(name: string, raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (raw === undefined || raw.trim() === "") return headers;
  raw.split(",").forEach((entry, i) => {
    const eq = entry.indexOf("=");
    const key = entry.slice(0, Math.max(eq, 0)).trim();
    if (eq < 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key))
      throw new ConfigError(name, `entry ${i + 1} is not key=value with a header name for key`);
    let value: string;
    try {
      value = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(name, `entry ${i + 1} (${key}) has a malformed percent-encoded value`);
    }
    headers[key.toLowerCase()] = value;
  });
  return headers;
}

/** The OpenTelemetry SDK variables Warden reads; other OTEL_* variables are not read. */
const OTEL_VARIABLES = [
  "OTEL_TRACES_EXPORTER",
  "OTEL_SDK_DISABLED",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_TIMEOUT",
  "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
  "OTEL_SERVICE_NAME",
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
] as const;

/** The first of the named variables that is set and not blank (signal-specific first, as OpenTelemetry's exporter settings rank them). */
function firstSet(env: Env, ...names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

function httpUrl(name: string, value: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${value}"`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new ConfigError(name, `must be an http(s) URL (OTLP/HTTP), got "${value}"`);
  return parsed;
}

/**
 * OpenTelemetry traces. Off unless OTEL_TRACES_EXPORTER=otlp (the SDK's own default is otlp; Warden's
 * is none, so variables set for other services in the same environment turn nothing on), and off
 * whatever it says with OTEL_SDK_DISABLED=true. Every variable is read here, and the others are
 * validated only when traces are on: a value meant for another SDK (grpc, say) does not stop a
 * Warden that sends none.
 */
function tracing(env: Env): TracingConfig | undefined {
  const otel: Env = Object.fromEntries(OTEL_VARIABLES.map((name) => [name, env[name]]));
  const exporter = otel.OTEL_TRACES_EXPORTER?.trim().toLowerCase() || "none";
  if (exporter !== "otlp" && exporter !== "none")
    throw new ConfigError(
      "OTEL_TRACES_EXPORTER",
      `must be otlp or none, got "${otel.OTEL_TRACES_EXPORTER}" (Warden sends traces over OTLP/HTTP only)`,
    );
  if (exporter === "none" || flag(otel, "OTEL_SDK_DISABLED", false)) return undefined;

  const specific = firstSet(otel, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const general = firstSet(otel, "OTEL_EXPORTER_OTLP_ENDPOINT");
  // The general endpoint is a base URL that every signal's path is appended to; the specific one is used as is.
  const endpoint = specific
    ? httpUrl(specific.name, specific.value)
    : httpUrl(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        `${(general?.value ?? OTLP_DEFAULT_ENDPOINT).replace(/\/+$/, "")}/v1/traces`,
      );
  const protocol = firstSet(otel, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
  const knownProtocol = OTLP_PROTOCOLS.find((p) => p === (protocol?.value ?? "http/protobuf"));
  if (knownProtocol === undefined)
    throw new ConfigError(
      protocol?.name ?? "OTEL_EXPORTER_OTLP_PROTOCOL",
      `must be ${OTLP_PROTOCOLS.join(" or ")}, got "${protocol?.value}" (Warden has no gRPC exporter: use the collector's OTLP/HTTP port, 4318)`,
    );
  const sampler = otel.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  const knownSampler = TRACE_SAMPLERS.find((s) => s === sampler);
  if (knownSampler === undefined)
    throw new ConfigError(
      "OTEL_TRACES_SAMPLER",
      `must be one of ${TRACE_SAMPLERS.join(", ")}, got "${otel.OTEL_TRACES_SAMPLER}"`,
    );
  const ratioText = otel.OTEL_TRACES_SAMPLER_ARG?.trim() || "1";
  const ratio = /^\d+(\.\d+)?$/.test(ratioText) ? Number(ratioText) : Number.NaN;
  if (!(ratio >= 0 && ratio <= 1))
    throw new ConfigError("OTEL_TRACES_SAMPLER_ARG", `must be a ratio from 0 to 1, got "${ratioText}"`);
  const timeout = firstSet(otel, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT");
  return Object.freeze({
    endpoint,
    protocol: knownProtocol,
    headers: Object.freeze({
      ...otlpHeaders("OTEL_EXPORTER_OTLP_HEADERS", otel.OTEL_EXPORTER_OTLP_HEADERS),
      ...otlpHeaders("OTEL_EXPORTER_OTLP_TRACES_HEADERS", otel.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    }),
    timeoutMs: timeout ? integer(otel, timeout.name, 10_000, 100, 120_000) : 10_000,
    serviceName: text(otel, "OTEL_SERVICE_NAME", "warden"),
    sampler: knownSampler,
    samplerRatio: ratio,
  });
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export function defaultDatabaseUrl(cwd: string = process.cwd()): string {
  return `sqlite:${path.join(cwd, "data", "warden.db")}`;
}

function databaseUrl(env: Env): string {
  const value = text(env, "WARDEN_DATABASE_URL", defaultDatabaseUrl());
  if (value.startsWith("sqlite:")) {
    if (value.slice("sqlite:".length) === "")
      throw new ConfigError("WARDEN_DATABASE_URL", "sqlite: needs a file path");
    return value;
  }
  if (value.startsWith("postgres://") || value.startsWith("postgresql://")) return value;
  throw new ConfigError("WARDEN_DATABASE_URL", `must start with sqlite: or postgres:// (got "${value}")`);
}

/** WARDEN_PG_READ_URL: only beside a PostgreSQL WARDEN_DATABASE_URL. */
function pgReadUrl(env: Env, database: string): string | undefined {
  const value = env.WARDEN_PG_READ_URL?.trim();
  if (!value) return undefined;
  if (!(value.startsWith("postgres://") || value.startsWith("postgresql://")))
    throw new ConfigError("WARDEN_PG_READ_URL", `must start with postgres:// (got "${value}")`);
  if (database.startsWith("sqlite:"))
    throw new ConfigError(
      "WARDEN_PG_READ_URL",
      "needs a PostgreSQL WARDEN_DATABASE_URL (SQLite reads its own file)",
    );
  return value;
}

/**
 * Reads the configuration from `env`; every setting is read whatever the others say, so reading an
 * empty environment through a recording proxy names them all (knownVariables). Under
 * WARDEN_STRICT_CONFIG a WARDEN_* variable that is not one of them refuses the start.
 */
export function loadConfig(env: Env = process.env): Config {
  const config = readConfig(env);
  const strict = flag(env, "WARDEN_STRICT_CONFIG", false);
  const unknown = unknownVariables(env);
  if (unknown.length > 0 && strict) {
    throw new ConfigError(
      (unknown[0] as UnknownVariable).name,
      `${unknownText(unknown)} (WARDEN_STRICT_CONFIG is on)`,
    );
  }
  return config;
}

/** Variables of this repository's own tools (tests, benchmarks, the fuzzer), never the service's. */
const TOOLING_PREFIXES = ["WARDEN_TEST_", "WARDEN_BENCH_", "WARDEN_FUZZ_"] as const;

let known: ReadonlySet<string> | undefined;
/** Every variable the configuration reads. */
export function knownVariables(): ReadonlySet<string> {
  if (!known) {
    const read = new Set<string>(["WARDEN_STRICT_CONFIG"]);
    const recording = new Proxy({} as Env, {
      get: (_, name) => {
        if (typeof name === "string") read.add(name);
        return undefined;
      },
    });
    readConfig(recording);
    known = read;
  }
  return known;
}

export interface UnknownVariable {
  name: string;
  /** The settings it most likely meant, closest first (at most two). */
  nearest: string[];
}

const words = (name: string): string[] => name.replace(/^WARDEN_/, "").split("_");

/**
 * WARDEN_* variables in `env` that no setting reads (a misspelling, or a setting of another version),
 * each with the settings it most likely meant: those sharing the most words with it, then the fewest
 * edits apart.
 */
export function unknownVariables(env: Env): UnknownVariable[] {
  const settings = [...knownVariables()].filter((k) => k.startsWith("WARDEN_"));
  return Object.keys(env)
    .filter((name) => name.startsWith("WARDEN_") && env[name] !== undefined && !knownVariables().has(name))
    .filter((name) => !TOOLING_PREFIXES.some((p) => name.startsWith(p)))
    .sort()
    .map((name) => {
      const own = new Set(words(name));
      const ranked = settings
        .map((k) => ({ k, shared: words(k).filter((w) => own.has(w)).length, edits: distance(name, k) }))
        .filter((c) => c.shared > 0 || c.edits <= Math.max(3, Math.floor(name.length / 4)))
        .sort((a, b) => b.shared - a.shared || a.edits - b.edits);
      return { name, nearest: ranked.slice(0, 2).map((c) => c.k) };
    });
}

/** One sentence for the warning or the refusal. */
export function unknownText(unknown: readonly UnknownVariable[]): string {
  return unknown
    .map(
      (u) =>
        `${u.name} is not a Warden setting${u.nearest.length > 0 ? ` (did you mean ${u.nearest.join(" or ")}?)` : ""}`,
    )
    .join("; ");
}

function readConfig(env: Env): Config {
  const logLevel = text(env, "WARDEN_LOG_LEVEL", "info");
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError("WARDEN_LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  const verifyDeadlineMs = integer(env, "WARDEN_VERIFY_DEADLINE_MS", 30, 5, 45);
  const storeTimeoutMs = integer(env, "WARDEN_STORE_TIMEOUT_MS", 20, 1, 10_000);
  const pgPoolSize = integer(env, "WARDEN_PG_POOL_SIZE", 10, 1, 200);
  const pgPoolMin = integer(env, "WARDEN_PG_POOL_MIN", Math.min(2, pgPoolSize), 0, 200);
  const pooler = pgPooler(env);
  const redis = redisUrl(env);
  const requestTimeoutMs = integer(env, "WARDEN_REQUEST_TIMEOUT_MS", 10_000, 1000, 300_000);
  const headersTimeoutMs = integer(env, "WARDEN_HEADERS_TIMEOUT_MS", 5000, 500, 300_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      "WARDEN_HEADERS_TIMEOUT_MS",
      `must not exceed WARDEN_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${headersTimeoutMs}`,
    );
  }
  const idempotencyTtlHours = integer(env, "WARDEN_IDEMPOTENCY_TTL_HOURS", 24, 24, 24 * 30);
  if (pgPoolMin > pgPoolSize) {
    throw new ConfigError(
      "WARDEN_PG_POOL_MIN",
      `must not exceed WARDEN_PG_POOL_SIZE (${pgPoolSize}), got ${pgPoolMin}`,
    );
  }
  const database = databaseUrl(env);
  return Object.freeze({
    databaseUrl: database,
    host: text(env, "HOST", "127.0.0.1"),
    port: integer(env, "PORT", 8080, 0, 65_535),
    logLevel,
    bodyLimitBytes: integer(env, "WARDEN_BODY_LIMIT_BYTES", 64 * 1024, 1024, 10 * 1024 * 1024),
    rateLimitMax: integer(env, "WARDEN_RATE_LIMIT_MAX", 6000, 1, 100_000_000),
    rateLimitWindowSeconds: integer(env, "WARDEN_RATE_LIMIT_WINDOW_SECONDS", 60, 1, 3600),
    readRowsPerMinute: integer(env, "WARDEN_READ_ROWS_PER_MINUTE", 200_000, 1000, 100_000_000),
    readStoreSecondsPerMinute: integer(env, "WARDEN_READ_STORE_SECONDS_PER_MINUTE", 20, 1, 600),
    tokenIssuer: text(env, "WARDEN_TOKEN_ISSUER", "https://warden.local"),
    tokenAudience: text(env, "WARDEN_TOKEN_AUDIENCE", "warden:verdict"),
    tokenTtlSeconds: integer(env, "WARDEN_TOKEN_TTL_SECONDS", 300, 10, 86_400),
    verifyDeadlineMs,
    storeTimeoutMs,
    idempotencyTtlHours,
    retentionDays: retentionDays(env, idempotencyTtlHours),
    retentionHours: retentionHours(env),
    pgPoolSize,
    pgPoolMin,
    pgPooler: pooler,
    pgPreparedStatements: flag(env, "WARDEN_PG_PREPARED_STATEMENTS", pooler === "none"),
    pgPatientTimeoutMs: integer(env, "WARDEN_PG_PATIENT_TIMEOUT_MS", 2_000, 10, 60_000),
    pgReadTimeoutMs: integer(env, "WARDEN_PG_READ_TIMEOUT_MS", 10_000, 100, 600_000),
    pgReadUrl: pgReadUrl(env, databaseUrl(env)),
    pgReadConcurrency: integer(env, "WARDEN_PG_READ_CONCURRENCY", 1, 1, 64),
    pgReadSharePercent: integer(env, "WARDEN_PG_READ_SHARE_PERCENT", 50, 1, 100),
    redisUrl: redis,
    redisKeyPrefix: redisKeyPrefix(env, redis),
    signingKeyRefreshSeconds: integer(env, "WARDEN_SIGNING_KEY_REFRESH_SECONDS", 10, 1, 3600),
    challengeTtlSeconds: integer(env, "WARDEN_CHALLENGE_TTL_SECONDS", 300, 10, 86_400),
    consoleSessionHours: integer(env, "WARDEN_CONSOLE_SESSION_HOURS", 8, 1, 720),
    consoleSignInsPerMinute: integer(env, "WARDEN_CONSOLE_SIGNINS_PER_MINUTE", 10, 1, 100_000),
    clearWindowSeconds: integer(env, "WARDEN_CLEAR_WINDOW_SECONDS", 600, 10, 86_400),
    paymentApiBase: url(env, "WARDEN_STRIPE_API_BASE", "https://api.stripe.com"),
    trustedProxies: trustedProxies(env),
    adminPort: env.WARDEN_ADMIN_PORT?.trim() ? integer(env, "WARDEN_ADMIN_PORT", 0, 0, 65_535) : undefined,
    adminHost: text(env, "WARDEN_ADMIN_HOST", "127.0.0.1"),
    adminHosts: adminHosts(env),
    paymentTimeoutMs: integer(env, "WARDEN_STRIPE_TIMEOUT_MS", 3000, 100, 30_000),
    policyRefreshSeconds: integer(env, "WARDEN_POLICY_REFRESH_SECONDS", 5, 1, 3600),
    agentDirectoryFetch: flag(env, "WARDEN_AGENT_DIRECTORY_FETCH", true),
    agentDirectoryTimeoutMs: integer(env, "WARDEN_AGENT_DIRECTORY_TIMEOUT_MS", 3000, 100, 30_000),
    agentDirectoryMaxBytes: integer(env, "WARDEN_AGENT_DIRECTORY_MAX_BYTES", 65_536, 1024, 1_048_576),
    agentDirectoryAllowPrivate: flag(env, "WARDEN_AGENT_DIRECTORY_ALLOW_PRIVATE", false),
    // The Web Bot Auth architecture draft recommends that signatures expire within 24 hours.
    agentSignatureMaxValiditySeconds: integer(
      env,
      "WARDEN_AGENT_SIGNATURE_MAX_VALIDITY_SECONDS",
      86_400,
      60,
      2_592_000,
    ),
    degradedQueueCapacity: integer(env, "WARDEN_DEGRADED_QUEUE_CAPACITY", 10_000, 0, 1_000_000),
    degradedSpoolDir: path.resolve(text(env, "WARDEN_DEGRADED_SPOOL_DIR", path.join("data", "spool"))),
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: integer(env, "WARDEN_IDLE_TIMEOUT_MS", 60_000, 1000, 3_600_000),
    keepAliveTimeoutMs: integer(env, "WARDEN_KEEP_ALIVE_TIMEOUT_MS", 72_000, 1000, 3_600_000),
    maxConnections: integer(env, "WARDEN_MAX_CONNECTIONS", 4096, 16, 1_000_000),
    maxConnectionsPerAddress: integer(env, "WARDEN_MAX_CONNECTIONS_PER_ADDRESS", 1024, 1, 1_000_000),
    shutdownGraceMs: integer(env, "WARDEN_SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    workers: env.WARDEN_WORKERS?.trim() ? parseWorkers(env.WARDEN_WORKERS, "WARDEN_WORKERS", database) : 1,
    workerRestartBackoffMs: integer(env, "WARDEN_WORKER_RESTART_BACKOFF_MS", 500, 10, 30_000),
    tracing: tracing(env),
  });
}
