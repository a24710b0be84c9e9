import { CompiledQuery, Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { Store } from "../interfaces.js";
import { StoreUnavailableError } from "../interfaces.js";
import { migrateToLatest } from "../migrations.js";
import type { Database } from "../schema.js";
import { createSqlStore, type SqlRuntime } from "../sqlStore.js";
import { NamedStatements } from "./namedStatements.js";
import { reuseGuard } from "./reuseGuard.js";

// Epoch milliseconds and counts are int8; they fit a JavaScript number, so parse them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface PostgresOptions {
  url: string;
  /** Deadline of one statement (statement_timeout) and of acquiring a connection. */
  statementTimeoutMs: number;
  poolSize: number;
  /**
   * Connections opened by `warmUp` and kept open while idle (the rest close after 10 s idle), so a
   * burst after a quiet spell does not wait for new connections inside verify's deadline. Default 0.
   */
  poolMin?: number;
  /** How the connections name themselves (pg_stat_activity.application_name); default "warden". */
  applicationName?: string;
  /** A schema to use instead of public (tests run each suite in its own schema). */
  schema?: string;
  /**
   * The statement timeout of what is not on verify's 50 ms path (feedback, challenges, policies,
   * agents, signing keys, console sessions): these may wait for a busy database. Default 2,000 ms.
   */
  patientTimeoutMs?: number;
  /** The statement timeout of long reads (the console's aggregates, ledger totals). Default 10,000 ms. */
  readTimeoutMs?: number;
  /**
   * Whether the hot statements run as named prepared statements (namedStatements.ts); default true.
   * Off for a connection pooler that does not keep prepared statements across transactions
   * (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).
   */
  preparedStatements?: boolean;
}

/** Connecting for migrations at start-up may wait this long (several processes start at once). */
const MIGRATION_CONNECT_TIMEOUT_MS = 10_000;

/** The request pool's minimum: opened by `warmUp`, kept while idle. */
const keptConnections = (opts: PostgresOptions): number => Math.min(opts.poolMin ?? 0, opts.poolSize);

/**
 * Counters (velocity and rate limits) have a pool of their own whose connections commit without
 * waiting for the WAL flush (synchronous_commit off). Every verify of an API key updates that key's
 * rate-limit row, and a row lock is held until commit: waiting for the flush there serialized a
 * burst of one key's verifies behind one disk sync each. A crash loses at most the last fraction of
 * a second of counts (wal_writer_delay), which the counters' contract allows (interfaces.ts).
 */
const counterPoolSize = (opts: PostgresOptions): number => Math.max(2, Math.ceil(opts.poolSize / 2));

/** Connections for what is not on verify's path, and for long reads (their own, so they never take verify's). */
const patientPoolSize = counterPoolSize;
const READ_POOL_SIZE = 2;
const DEFAULT_PATIENT_TIMEOUT_MS = 2_000;
const DEFAULT_READ_TIMEOUT_MS = 10_000;

/** Every connection one process may hold: the budget docs/deployment.md states. */
export const connectionsPerProcess = (opts: PostgresOptions): number =>
  opts.poolSize + counterPoolSize(opts) + patientPoolSize(opts) + READ_POOL_SIZE;

type PoolUse = "migrations" | "requests" | "counters" | "patient" | "reads";

const poolSize = (opts: PostgresOptions, use: PoolUse): number =>
  use === "migrations"
    ? 1
    : use === "counters"
      ? counterPoolSize(opts)
      : use === "patient"
        ? patientPoolSize(opts)
        : use === "reads"
          ? READ_POOL_SIZE
          : opts.poolSize;

function pool(
  opts: PostgresOptions,
  statementTimeoutMs: number | undefined,
  use: PoolUse = statementTimeoutMs === undefined ? "migrations" : "requests",
  named?: NamedStatements,
): pg.Pool {
  const settings = [
    ...(opts.schema === undefined ? [] : [`-c search_path=${opts.schema}`]),
    ...(use === "counters" ? ["-c synchronous_commit=off"] : []),
  ];
  const created = new pg.Pool({
    ...(named === undefined ? {} : { Client: named.clientClass() }),
    connectionString: opts.url,
    application_name: opts.applicationName ?? "warden",
    max: poolSize(opts, use),
    min: use === "migrations" || use === "reads" ? 0 : Math.min(keptConnections(opts), poolSize(opts, use)),
    // No unbounded waits: a request that cannot get a connection in time fails like a slow statement.
    connectionTimeoutMillis:
      statementTimeoutMs === undefined ? MIGRATION_CONNECT_TIMEOUT_MS : Math.max(statementTimeoutMs, 50),
    // statement_timeout bounds the server's work; query_timeout bounds the client's wait, which is what
    // matters when the network itself stalls (the server never sees the statement).
    ...(statementTimeoutMs === undefined
      ? {}
      : { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + 25 }),
    ...(settings.length === 0 ? {} : { options: settings.join(" ") }),
  });
  // An idle connection that the server or the network drops (failover, reset) is discarded by the
  // pool; without a listener its error would crash the process.
  created.on("error", () => undefined);
  // Likewise for a connection in use: its query fails on its own; the client's error event must not
  // crash the process.
  created.on("connect", (client) => client.on("error", () => undefined));
  return created;
}

/**
 * The scale-out store: many Warden processes on one PostgreSQL. Transactions run at READ COMMITTED;
 * the atomic guarantees come from single conditional statements, unique constraints and, where a
 * decision reads before it writes (feedback quarantine, signing-key rotation), a transaction-scoped
 * advisory lock per key.
 */
export async function openPostgresStore(opts: PostgresOptions): Promise<Store> {
  // Migrations run without the request-path statement timeout, on their own short-lived pool.
  const migrator = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: reuseGuard(pool(opts, undefined)) }),
  });
  try {
    await migrateToLatest(migrator as unknown as Kysely<unknown>, "postgres");
  } catch (err) {
    throw new StoreUnavailableError(`cannot migrate PostgreSQL: ${(err as Error).message}`, { cause: err });
  } finally {
    await migrator.destroy();
  }
  const named = opts.preparedStatements === false ? undefined : new NamedStatements();
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: reuseGuard(pool(opts, opts.statementTimeoutMs, "requests", named)),
    }),
  });
  const counters = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: reuseGuard(pool(opts, opts.statementTimeoutMs, "counters", named)),
    }),
  });
  const patient = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: reuseGuard(pool(opts, opts.patientTimeoutMs ?? DEFAULT_PATIENT_TIMEOUT_MS, "patient")),
    }),
  });
  const reads = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: reuseGuard(pool(opts, opts.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS, "reads")),
    }),
  });
  const runtime: SqlRuntime = {
    db,
    writeTransaction: (fn) => db.transaction().execute(fn),
    // `early` writes are the counters' (runtime.ts).
    write: (fn, options) => fn(options?.early ? counters : db),
    // Only precompiled hot statements come through here (runtime.ts): they run as named statements.
    execute: (conn, query) => {
      named?.register(query.sql);
      return conn.executeQuery(query);
    },
    // Long reads on their own connections and timeout: a console user never takes verify's.
    report: async (query) => (await reads.executeQuery(query)).rows,
    tryExclusive: async (trx, key) => {
      const { rows } = await sql<{
        held: boolean;
      }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as held`.execute(trx);
      return rows[0]?.held === true;
    },
    serialize: async (trx, key) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
    },
    writeProbe: CompiledQuery.raw(
      "insert into readiness_probe (id, probed_at) values (1, (extract(epoch from clock_timestamp()) * 1000)::bigint) on conflict (id) do update set probed_at = excluded.probed_at",
    ),
    claimsInOneStatement: true,
    // Two of each: while one batch is in the database the next gathers, and a slow statement does
    // not hold every verify behind it. The rest of the pools serve what is not batched.
    batchesInFlight: { events: Math.min(2, opts.poolSize), counters: 2 },
    warmConnections: keptConnections(opts),
    close: async () => {
      await Promise.all([db.destroy(), counters.destroy(), patient.destroy(), reads.destroy()]);
    },
  };
  // What is not on verify's path waits for a busy database (PostgreSQL under load answered feedback
  // 503 at the 20 ms verify timeout): the same queries on the patient pool.
  return createSqlStore(runtime, {
    ...runtime,
    db: patient,
    writeTransaction: (fn) => patient.transaction().execute(fn),
    write: (fn, options) => fn(options?.early ? counters : patient),
  });
}
