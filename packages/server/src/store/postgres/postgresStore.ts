import {
  CompiledQuery,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DialectAdapter,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from "kysely";
import pg from "pg";
import type { Store } from "../interfaces.js";
import { StoreUnavailableError } from "../interfaces.js";
import { migrateToLatest, requireCurrentSchema, SchemaAheadError, SchemaBehindError } from "../migrations.js";
import type { Database } from "../schema.js";
import { createSqlStore, type SqlRuntime } from "../sqlStore.js";
import { abandonedWrites } from "./abandonedWrites.js";
import { ensurePartitionsAhead, listEventPartitions, maintainPartitions } from "./eventPartitions.js";
import { NamedStatements } from "./namedStatements.js";
import { ReadSlots } from "./readSlots.js";
import { reuseGuard } from "./reuseGuard.js";
import { grantRuntimeRole } from "./runtimeRole.js";

// Epoch milliseconds and counts are int8; they fit a JavaScript number, so parse them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface PostgresOptions {
  url: string;
  /** Bring the schema up to date (default), or only check that it is (SchemaBehindError if not). */
  migrate?: boolean;
  /** After migrating, grant this role what `warden serve --no-migrate` needs (runtimeRole.ts). */
  runtimeRole?: string;
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
   * Long reads running at once on the server they read, across every process that reads it
   * (readSlots.ts); the others wait their turn. Default 1.
   */
  readConcurrency?: number;
  /**
   * The share of its time, in percent, each of those slots may spend reading: after a read it rests,
   * taken and idle, for the rest (readSlots.ts). Default 50.
   */
  readShare?: number;
  /**
   * Another server for the long reads (the console's aggregates and lists, ledger totals), e.g. a
   * streaming replica: they then lag the primary by its replication delay. Everything verify,
   * challenge and feedback read stays on the primary (they read their own writes).
   */
  readUrl?: string;
  /**
   * What stands between Warden and PostgreSQL; default "none" (a direct connection). "transaction":
   * a pooler that lends a server connection for one transaction at a time and refuses startup
   * parameters it does not know (PgBouncer in transaction mode). Behind it no connection sends
   * statement_timeout or options (startupParameters): every wait stays bounded on the client
   * (query_timeout, per pool as without a pooler), the server's work by the role's statement_timeout
   * (docs/deployment.md), and counters commit waiting for the WAL flush like every other write.
   */
  pooler?: "none" | "transaction";
  /**
   * Whether the hot statements run as named prepared statements (namedStatements.ts). Default: true
   * without a pooler, false behind a transaction pooler, where a statement prepared on one server
   * connection is missing on the next; true there only for a pooler that keeps them (PgBouncer 1.21
   * and later with max_prepared_statements).
   */
  preparedStatements?: boolean;
}

/** How long `warden migrate` waits for another process making the coming weeks' partitions. */
const PARTITIONS_WAIT_MS = 30_000;

/** Connecting for migrations at start-up may wait this long (several processes start at once). */
const MIGRATION_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long opening one connection may take before it is given up (a server or network that does not
 * answer). Not the caller's wait, which is its statement timeout (guardedPool): on a machine where
 * a server process start took longer than verify's 50 ms, ending each opening at the caller's wait
 * opened and discarded a connection for every request, none ever ready, the server's CPU spent on
 * process starts (docs/deployment.md, "Connections").
 */
const CONNECT_TIMEOUT_MS = 5_000;

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
const DEFAULT_READ_CONCURRENCY = 1;
const DEFAULT_READ_SHARE = 50;
/**
 * Settling a write its connection gave up on (abandonedWrites.ts): one connection, opened when
 * needed, with a timeout of its own, since the verify and patient timeouts may be what gave up. The
 * server process that ran the write may take up to SETTLE_PATIENCE_MS to exit (a COMMIT waiting for
 * a busy disk's flush finishes first); the processes being ended are looked for every SETTLE_POLL_MS.
 */
const SETTLE_POOL_SIZE = 1;
const SETTLE_TIMEOUT_MS = 2_000;
const SETTLE_POLL_MS = 25;
const SETTLE_PATIENCE_MS = 5_000;
/**
 * The rate-limit counts of the routes off verify's path (Store.patient): one connection of their own,
 * committing without waiting for the WAL flush as verify's counters do, with the patient timeout. A
 * burst of one key's requests then waits for its rate-limit row in the pool's queue, one short lock
 * at a time, never on the patient connections that other tenants' feedback and challenges need.
 */
const PATIENT_COUNTER_POOL_SIZE = 1;
/**
 * Partition maintenance (eventPartitions.ts): one connection, opened by a housekeeping pass that has
 * partitions to create or drop, closed when idle.
 */
const MAINTENANCE_POOL_SIZE = 1;

/** Every connection one process may hold: the budget docs/deployment.md states. */
export const connectionsPerProcess = (opts: PostgresOptions): number =>
  opts.poolSize +
  counterPoolSize(opts) +
  patientPoolSize(opts) +
  READ_POOL_SIZE +
  SETTLE_POOL_SIZE +
  PATIENT_COUNTER_POOL_SIZE +
  MAINTENANCE_POOL_SIZE;

type PoolUse =
  | "migrations"
  | "maintenance"
  | "requests"
  | "counters"
  | "patient"
  | "patientCounters"
  | "reads"
  | "settle";

const poolSize = (opts: PostgresOptions, use: PoolUse): number =>
  use === "migrations" || use === "maintenance"
    ? 1
    : use === "counters"
      ? counterPoolSize(opts)
      : use === "patient"
        ? patientPoolSize(opts)
        : use === "reads"
          ? READ_POOL_SIZE
          : use === "settle"
            ? SETTLE_POOL_SIZE
            : use === "patientCounters"
              ? PATIENT_COUNTER_POOL_SIZE
              : opts.poolSize;

/**
 * What a connection of `use` tells the server as it opens: its name and, without a transaction
 * pooler, its statement timeout (the server's own bound on its work) and settings. A transaction
 * pooler refuses any other startup parameter (PgBouncer: "unsupported startup parameter"), drops it
 * when told to ignore it, and a SET instead would outlive the transaction on a server connection
 * that other clients share next: behind one, only the name.
 */
function startupParameters(
  opts: PostgresOptions,
  use: PoolUse,
  statementTimeoutMs: number | undefined,
): pg.ClientConfig {
  const named = { connectionString: opts.url, application_name: opts.applicationName ?? "warden" };
  if (opts.pooler === "transaction") return named;
  const settings = [
    ...(opts.schema === undefined ? [] : [`-c search_path=${opts.schema}`]),
    ...(use === "counters" || use === "patientCounters" ? ["-c synchronous_commit=off"] : []),
    // On the primary a long read is one server process: parallel workers would give the console's
    // scans the other cores, the ones verify's statements run on (PostgreSQL has no priorities).
    ...(use === "reads" && opts.readUrl === undefined ? ["-c max_parallel_workers_per_gather=0"] : []),
  ];
  return {
    ...named,
    ...(statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs }),
    ...(settings.length === 0 ? {} : { options: settings.join(" ") }),
  };
}

function pool(
  opts: PostgresOptions,
  statementTimeoutMs: number | undefined,
  use: PoolUse = statementTimeoutMs === undefined ? "migrations" : "requests",
  named?: NamedStatements,
): pg.Pool {
  const created = new pg.Pool({
    ...(named === undefined ? {} : { Client: named.clientClass() }),
    ...startupParameters(opts, use, statementTimeoutMs),
    max: poolSize(opts, use),
    min:
      use === "migrations" ||
      use === "maintenance" ||
      use === "reads" ||
      use === "settle" ||
      use === "patientCounters"
        ? 0
        : Math.min(keptConnections(opts), poolSize(opts, use)),
    // How long opening a connection may take (reuseGuard bounds each caller's wait, acquireTimeoutMs):
    // an opening outlives the request that caused it and serves the next one.
    connectionTimeoutMillis:
      statementTimeoutMs === undefined
        ? MIGRATION_CONNECT_TIMEOUT_MS
        : Math.max(statementTimeoutMs, CONNECT_TIMEOUT_MS),
    // statement_timeout (startupParameters) bounds the server's work; query_timeout bounds the
    // client's wait, which is what matters when the network itself stalls (the server never sees the
    // statement), and behind a transaction pooler the wait for one of its server connections.
    ...(statementTimeoutMs === undefined ? {} : { query_timeout: statementTimeoutMs + 25 }),
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
 * A pool as the store uses it (reuseGuard.ts): a connection goes back only idle outside a
 * transaction, and no unbounded waits: a request that cannot get a connection in time fails like a
 * slow statement (acquireTimeoutMs), while the connection being opened for it is kept for the next.
 */
function guardedPool(
  opts: PostgresOptions,
  statementTimeoutMs: number | undefined,
  use?: PoolUse,
  named?: NamedStatements,
): PostgresPool {
  return reuseGuard(pool(opts, statementTimeoutMs, use, named), {
    acquireTimeoutMs:
      statementTimeoutMs === undefined ? MIGRATION_CONNECT_TIMEOUT_MS : Math.max(statementTimeoutMs, 50),
  });
}

/** What an operator changes when a pooler refuses or drops Warden's connection parameters. */
const POOLER_HINT =
  "a connection pooler between Warden and PostgreSQL refuses or drops them (PgBouncer refuses them, or drops " +
  "those in ignore_startup_parameters): set WARDEN_PG_POOLER=transaction (docs/deployment.md, PgBouncer)";

/** SQLSTATE query_canceled: a statement timeout, or a cancel request. */
const QUERY_CANCELED = "57014";
const CHECK_ATTEMPTS = 3;

/**
 * Before anything else, on one connection opened as a request connection opens (the counters', which
 * send the most): whether the statement timeouts will hold.
 *
 * Without a pooler, PostgreSQL must receive what the connections send. A pooler that refuses it
 * would fail every request connection, and only once the start-up reads had retried for 15 s; one
 * that drops it would leave statements without their timeout and, in transaction mode, named
 * statements missing on the next server connection ("prepared statement … does not exist"). Either
 * way the start fails at once, naming the setting to use.
 *
 * Behind a transaction pooler, connections send no timeout: the server's statement_timeout for
 * Warden's role must bound statements instead (docs/deployment.md). Unset (0), the start fails,
 * saying what to set.
 */
async function checkConnections(opts: PostgresOptions): Promise<void> {
  const behindPooler = opts.pooler === "transaction";
  const client = new pg.Client({
    ...startupParameters(opts, "counters", opts.statementTimeoutMs),
    connectionTimeoutMillis: MIGRATION_CONNECT_TIMEOUT_MS,
  });
  client.on("error", () => undefined);
  let received: { timeout: string; commit: string; role: string } | undefined;
  try {
    await client.connect();
    // The check runs under the timeout it checks (a request's, tens of milliseconds): a first query
    // on a new connection to a busy server can overrun it once (SQLSTATE 57014), which is no reason
    // to refuse the start. A few more tries; a timeout that fires every time still fails the start.
    for (let attempt = 1; ; attempt++) {
      try {
        const { rows } = await client.query<{ timeout: string; commit: string; role: string }>(
          "select (select setting from pg_settings where name = 'statement_timeout') as timeout, " +
            "current_setting('synchronous_commit') as commit, current_user as role",
        );
        received = rows[0];
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== QUERY_CANCELED || attempt >= CHECK_ATTEMPTS) throw err;
      }
    }
  } catch (err) {
    const message = (err as Error).message;
    throw new StoreUnavailableError(
      /startup parameter/i.test(message) && !behindPooler
        ? `PostgreSQL did not accept Warden's connection parameters (${message}): ${POOLER_HINT}`
        : `cannot connect to PostgreSQL: ${message}`,
      { cause: err },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  if (behindPooler) {
    if (received?.timeout === "0") {
      throw new StoreUnavailableError(
        "behind a transaction pooler (WARDEN_PG_POOLER=transaction) Warden's connections send no statement " +
          `timeout, and role ${received.role} has none: PostgreSQL would let a statement run unbounded. Set one: ` +
          `ALTER ROLE ${received.role} SET statement_timeout = '10s' (docs/deployment.md, PgBouncer)`,
      );
    }
    return;
  }
  if (received?.timeout !== String(opts.statementTimeoutMs) || received.commit !== "off") {
    throw new StoreUnavailableError(
      `PostgreSQL did not receive Warden's connection parameters (statement_timeout ${received?.timeout} ms, ` +
        `synchronous_commit ${received?.commit}; sent ${opts.statementTimeoutMs} ms, off): ${POOLER_HINT}`,
    );
  }
}

/**
 * Kysely's migration lock: a session-level advisory lock (pg_advisory_lock) taken before the
 * migrations' transaction. Behind a transaction pooler the lock, the transaction and the unlock each
 * run on whichever server connection the pooler lends: processes starting together migrated at once
 * ("duplicate key value violates unique constraint pg_type_typname_nsp_index"), and an unlock sent on
 * another server connection leaves the lock held by one that others use next. There the lock is
 * taken inside the transaction instead (pooledMigrations), on the same key, so processes connected
 * directly wait for it too.
 */
const MIGRATION_LOCK_ID = "3853314791062309107";

class PooledMigrationsAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

/**
 * Kysely's look for its migration tables (Migrator) read every schema of the database and asked
 * has_schema_privilege(name) of each: a schema that another client dropped meanwhile (another
 * Warden's, a test's) failed the look with 3F000 "schema … does not exist", and the start with it.
 * The migrations' connection looks at its own schema only; the Migrator reads tables' names alone.
 */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own signature (Dialect.createIntrospector).
  constructor(private readonly db: Kysely<any>) {}
  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<SchemaMetadata>`select current_schema() as name`.execute(this.db);
    return rows;
  }
  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, ns.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(this.db);
    return rows.map((r) => ({
      name: r.name,
      schema: r.schema,
      isView: r.kind === "v" || r.kind === "m",
      columns: [],
    }));
  }
}

class MigrationsDialect extends PostgresDialect {
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own signature (Dialect.createIntrospector).
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

class PooledMigrationsDialect extends MigrationsDialect {
  override createAdapter(): DialectAdapter {
    return new PooledMigrationsAdapter();
  }
}

/**
 * The migrations' connections behind a transaction pooler: right after Kysely's BEGIN, the
 * transaction lifts the role's statement_timeout (docs/deployment.md; migrations run without one on
 * a direct connection) and takes the migration lock. Both end with the transaction, so the shared
 * server connection is left as it was.
 */
function pooledMigrations(pool: PostgresPool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const query = async (text: string, parameters: readonly unknown[]) => {
        const result = await client.query(text, parameters);
        if (/^\s*(begin|start transaction)\b/i.test(text)) {
          await client.query("set local statement_timeout = 0", []);
          await client.query(`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`, []);
        }
        return result;
      };
      return { query: query as unknown as PostgresPoolClient["query"], release: () => client.release() };
    },
    end: () => pool.end(),
  };
}

/**
 * The scale-out store: many Warden processes on one PostgreSQL. Transactions run at READ COMMITTED;
 * the atomic guarantees come from single conditional statements, unique constraints and, where a
 * decision reads before it writes (feedback quarantine, signing-key rotation), a transaction-scoped
 * advisory lock per key.
 */
export async function openPostgresStore(opts: PostgresOptions): Promise<Store> {
  const behindPooler = opts.pooler === "transaction";
  if (behindPooler && opts.schema !== undefined) {
    // search_path goes as a startup parameter, which a transaction pooler refuses.
    throw new Error("a schema other than the role's search_path needs a direct connection (pooler none)");
  }
  await checkConnections(opts);
  // Migrations run without the request-path statement timeout, on their own short-lived pool.
  const migrations = guardedPool(opts, undefined);
  const migrator = new Kysely<Database>({
    dialect: behindPooler
      ? new PooledMigrationsDialect({ pool: pooledMigrations(migrations) })
      : new MigrationsDialect({ pool: migrations }),
  });
  try {
    if (opts.migrate === false)
      await requireCurrentSchema(migrator as unknown as Kysely<unknown>, "postgres");
    else {
      await migrateToLatest(migrator as unknown as Kysely<unknown>, "postgres");
      // With the role that may change the schema: the coming weeks' partitions (eventPartitions.ts).
      const db = migrator as unknown as Kysely<unknown>;
      await ensurePartitionsAhead(db, Date.now(), db, PARTITIONS_WAIT_MS);
      if (opts.runtimeRole !== undefined) await grantRuntimeRole(db, opts.runtimeRole);
    }
  } catch (err) {
    if (err instanceof SchemaBehindError || err instanceof SchemaAheadError) throw err;
    throw new StoreUnavailableError(`cannot migrate PostgreSQL: ${(err as Error).message}`, { cause: err });
  } finally {
    await migrator.destroy();
  }
  const named = (opts.preparedStatements ?? !behindPooler) ? new NamedStatements() : undefined;
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: guardedPool(opts, opts.statementTimeoutMs, "requests", named),
    }),
  });
  const counters = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: guardedPool(opts, opts.statementTimeoutMs, "counters", named),
    }),
  });
  const patient = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: guardedPool(opts, opts.patientTimeoutMs ?? DEFAULT_PATIENT_TIMEOUT_MS, "patient"),
    }),
  });
  const reads = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: guardedPool(
        { ...opts, url: opts.readUrl ?? opts.url },
        opts.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS,
        "reads",
      ),
    }),
  });
  const readSlots = new ReadSlots({
    slots: opts.readConcurrency ?? DEFAULT_READ_CONCURRENCY,
    share: opts.readShare ?? DEFAULT_READ_SHARE,
    timeoutMs: opts.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS,
  });
  const patientCounters = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: guardedPool(opts, opts.patientTimeoutMs ?? DEFAULT_PATIENT_TIMEOUT_MS, "patientCounters"),
    }),
  });
  const settle = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: guardedPool(opts, SETTLE_TIMEOUT_MS, "settle") }),
  });
  // Partition maintenance: DDL without the request timeouts (each statement bounded on its own).
  const maintenance = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: guardedPool(opts, undefined, "maintenance") }),
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
    // Long reads on their own connections and timeout, a console user never taking verify's, and
    // in a read slot: however many processes read the server, only so many scan it at once.
    report: (query, meter) => readSlots.run(reads, query, meter),
    tryExclusive: async (trx, key) => {
      const { rows } = await sql<{
        held: boolean;
      }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as held`.execute(trx);
      return rows[0]?.held === true;
    },
    serialize: async (trx, key) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
    },
    holdRows: (select) => select.forShare(),
    // A chunk is eight statements, each a round trip, and a commit: a hundred events a chunk removed
    // 830 a second, a thousand 6,200 (docs/benchmarks.md, "Storage and retention").
    removalPace: { chunk: 1000, rest: 1 },
    // Deleted rows stay in the table's pages until VACUUM makes their space reusable
    // (docs/security-model.md, "Erasure").
    overwritingDeleted: (fn) => fn(),
    writeProbe: CompiledQuery.raw(
      "insert into readiness_probe (id, probed_at) values (1, (extract(epoch from clock_timestamp()) * 1000)::bigint) on conflict (id) do update set probed_at = excluded.probed_at",
    ),
    claimsInOneStatement: true,
    jsonArrayElements: (json, alias) =>
      sql`jsonb_array_elements_text(${json}::jsonb) as ${sql.id(alias)}(value)`,
    jsonMember: (json, name) => sql<string | null>`(${json}::jsonb ->> ${name})`,
    // Two of each: while one batch is in the database the next gathers, and a slow statement does
    // not hold every verify behind it. The rest of the pools serve what is not batched.
    batchesInFlight: { events: Math.min(2, opts.poolSize), counters: 2 },
    keptDespite: abandonedWrites(settle, {
      behindPooler,
      patienceMs: SETTLE_PATIENCE_MS,
      pollMs: SETTLE_POLL_MS,
    }),
    // Each pass looks on a pool that is open anyway; the maintenance connection opens only for DDL.
    partitions: {
      ensureAhead: (now) => ensurePartitionsAhead(maintenance, now, patient as unknown as Kysely<unknown>),
      list: () => listEventPartitions(patient as unknown as Kysely<unknown>),
      // A session's advisory lock and DETACH … CONCURRENTLY need one server connection throughout,
      // which a transaction pooler does not lend: there retention deletes row by row.
      maintain: behindPooler ? async () => undefined : (fn) => maintainPartitions(maintenance, fn),
    },
    warmConnections: keptConnections(opts),
    close: async () => {
      readSlots.close();
      await Promise.all([
        db.destroy(),
        counters.destroy(),
        patient.destroy(),
        reads.destroy(),
        settle.destroy(),
        patientCounters.destroy(),
        maintenance.destroy(),
      ]);
    },
  };
  // What is not on verify's path waits for a busy database (PostgreSQL under load answered feedback
  // 503 at the 20 ms verify timeout): the same queries on the patient pool, and those routes'
  // rate-limit counts (the `early` writes, Store.patient) on a connection of their own
  // (PATIENT_COUNTER_POOL_SIZE says why).
  return createSqlStore(runtime, {
    ...runtime,
    db: patient,
    writeTransaction: (fn) => patient.transaction().execute(fn),
    write: (fn, options) => fn(options?.early ? patientCounters : patient),
  });
}
