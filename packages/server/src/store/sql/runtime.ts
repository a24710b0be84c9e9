import type { CompiledQuery, Kysely, QueryResult, RawBuilder, Transaction } from "kysely";
import type { ReadMeter } from "../interfaces.js";
import type { Database } from "../schema.js";

/**
 * What an SQL adapter supplies to the shared queries (sqlStore.ts and sql/*): how a write transaction
 * starts (SQLite takes the write lock up front with BEGIN IMMEDIATE; PostgreSQL relies on row locks
 * and unique constraints), how independent writes are made durable, how hot statements run, how a
 * JSON array is unpacked, and how the connection closes.
 */
export interface SqlRuntime {
  readonly db: Kysely<Database>;
  /** Runs `fn` in one write transaction: committed when it resolves, rolled back when it throws. */
  writeTransaction<T>(fn: (trx: Kysely<Database> | Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs write statements that are each atomic on their own (no all-or-nothing across them); resolves
   * once they are durable. SQLite batches these into group commits.
   *
   * With `early`, it may resolve as soon as the statements ran, before their commit, so that the
   * caller's next write can share the commit (SQLite; see groupCommit.ts). Only for writes whose loss
   * in a failed commit is harmless and whose results the caller may use before they are durable:
   * velocity and rate-limit counters. PostgreSQL runs them on connections that commit without
   * waiting for the WAL flush (postgresStore.ts).
   */
  write<T>(fn: (conn: Kysely<Database>) => Promise<T>, options?: { early?: boolean }): Promise<T>;
  /**
   * Executes a precompiled hot-path statement on `conn` (`db`, or the connection a write job was
   * given). An adapter may run it more directly than Kysely's executor would.
   */
  execute<R>(conn: Kysely<Database>, query: CompiledQuery<R>): Promise<QueryResult<R>>;
  /**
   * Inside a write transaction: waits until no other transaction holding the same `key` is running,
   * across processes. SQLite needs nothing (BEGIN IMMEDIATE already serializes every writer);
   * PostgreSQL takes a transaction-scoped advisory lock.
   */
  serialize(trx: Kysely<Database>, key: string): Promise<void>;
  /**
   * Inside a write transaction: like `serialize`, but without waiting: false when another running
   * transaction holds `key` (PostgreSQL's pg_try_advisory_xact_lock); SQLite's BEGIN IMMEDIATE has
   * already made this transaction the only writer, so always true there.
   */
  tryExclusive(trx: Kysely<Database>, key: string): Promise<boolean>;
  /**
   * Inside a write transaction: makes a SELECT hold the rows it reads until the transaction ends, so
   * a concurrent delete of them waits for it (PostgreSQL's FOR SHARE). SQLite's BEGIN IMMEDIATE has
   * already made this transaction the only writer: the select is returned as it is.
   */
  holdRows<QB extends { forShare(): QB }>(select: QB): QB;
  /**
   * Runs `fn` with deleted content overwritten in the database file (SQLite's secure_delete, on this
   * connection for the duration); PostgreSQL has no such setting and runs `fn` as it is.
   */
  overwritingDeleted<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * How retention and erasure pace their deletes (eventRemoval.ts): at most `chunk` events a
   * transaction, and after each a rest of `rest` times its duration. SQLite deletes on verify's own
   * thread (small chunks, a long rest); PostgreSQL deletes in the database, a round trip a statement
   * (large chunks, a short rest).
   */
  readonly removalPace: { chunk: number; rest: number };
  /**
   * Runs a long read (ledger aggregates) where it does not hold up requests: a worker thread for
   * SQLite, whose driver is synchronous; PostgreSQL's pool is asynchronous already.
   */
  report<R>(query: CompiledQuery<R>, meter?: ReadMeter): Promise<R[]>;
  /**
   * A statement that succeeds, run as a write, only when the store can take writes (Store.ping):
   * SQLite's write batch takes the write lock first; PostgreSQL rewrites the one row of
   * readiness_probe, which a read-only server or a standby refuses (assigning a transaction id alone
   * is allowed in a read-only transaction, so it proves nothing).
   */
  readonly writeProbe: CompiledQuery<unknown>;
  /**
   * Whether an idempotent event write (claim the key, insert the event, both on the API key being
   * active) can be one statement: PostgreSQL's data-modifying CTEs; SQLite runs it as a transaction
   * inside its group commit, where the statements cost no round trips.
   */
  readonly claimsInOneStatement: boolean;
  /**
   * When set, verify's counter hits and plain event inserts from concurrent requests go to the
   * database in batches (verifyWriteBatches.ts), at most this many batches of each kind in flight:
   * PostgreSQL, where every statement is a round trip and every commit a WAL flush. SQLite's group
   * commit batches them already.
   */
  readonly batchesInFlight?: { events: number; counters: number };
  /**
   * The elements of a JSON array of strings kept as text (`json`), as a FROM item named `alias` with
   * one text column `value`: SQLite's json_each, PostgreSQL's jsonb_array_elements_text. Console reads
   * only (the reason counts): nothing on the write path unpacks JSON.
   */
  jsonArrayElements(json: RawBuilder<unknown>, alias: string): RawBuilder<unknown>;
  /**
   * A top-level text member of a JSON object kept as text, or null: SQLite's json_extract,
   * PostgreSQL's ->>. Console reads only (the campaigns: signals' digests, JA4, user agent, domain).
   */
  jsonMember(json: RawBuilder<unknown>, name: string): RawBuilder<string | null>;
  /**
   * After a write failed with `err`: whether it committed all the same, as `kept` (a select of the
   * write's row) finds once nothing the write sent can still commit. PostgreSQL: a statement given up
   * on at query_timeout or lost with its connection may still commit (reuseGuard.ts), so the server
   * process that ran it is ended first (pg_terminate_backend lets a COMMIT under way finish). False
   * when `err` abandoned nothing, and when the outcome cannot be known: behind a transaction pooler
   * (its server processes have no name Warden sees), or a database that does not answer. SQLite never
   * abandons a statement: always false.
   */
  keptDespite(err: unknown, kept: CompiledQuery<unknown>): Promise<boolean>;
  /**
   * PostgreSQL: events are kept in weekly partitions of their time (postgres/eventPartitions.ts),
   * which retention drops whole once every tenant's events in one are past their retention. SQLite
   * keeps one table.
   */
  readonly partitions?: PartitionedEvents;
  /** How many connections `Store.warmUp` opens at once (PostgreSQL: the pool's minimum; SQLite: its one). */
  readonly warmConnections: number;
  close(): Promise<void>;
}

/** One partition of events, attached or left detached by an interrupted drop. */
export interface EventPartition {
  readonly name: string;
  /** First time it holds (inclusive, epoch ms); undefined: from the lowest. */
  readonly from: number | undefined;
  /** First time past it (exclusive); undefined for a detached table, whose bound is gone. */
  readonly to: number | undefined;
  /**
   * attached; detaching (a DETACH … CONCURRENTLY cut short, to be finalized); detached (out of
   * `events`, to be emptied of dependants and dropped).
   */
  readonly state: "attached" | "detaching" | "detached";
}

/** The tables whose rows hang off an event. */
export type HangingTable =
  | "event_clears"
  | "challenges"
  | "feedback"
  | "feedback_resolutions"
  | "idempotency";

/** What partition maintenance may do, alone across processes (PartitionedEvents.maintain). */
export interface PartitionMaintenance {
  /** The partitions, oldest first, and the tables a cut-short drop left detached. */
  list(): Promise<EventPartition[]>;
  /** The tenants with events in the partition. */
  tenantsIn(name: string): Promise<string[]>;
  /** Takes the partition out of `events` without locking its readers and writers (or finishes doing so). */
  detach(partition: EventPartition): Promise<void>;
  /**
   * Reads the keys of a detached table in order, up to `size` of them after `after` (its key's index
   * alone: the pages the deletes below will probe are then in memory); resolves the last key read
   * and how many.
   */
  readKeys(name: string, after: string, size: number): Promise<{ last: string | undefined; read: number }>;
  /** How many pages `table` has now. */
  pages(table: HangingTable): Promise<number>;
  /**
   * Inside the write transaction `trx`: deletes the rows of `table` in its pages [from, to) whose
   * `column` names an event of the detached table `partition`; resolves their tenant and event
   * columns.
   */
  deleteHangingOff(
    trx: Kysely<Database>,
    partition: string,
    table: HangingTable,
    column: string,
    pages: readonly [number, number],
  ): Promise<{ tenant_id: string; event_id: string | null; reverify_event_id?: string | null }[]>;
  drop(name: string): Promise<void>;
}

export interface PartitionedEvents {
  /**
   * Creates the weekly partitions that will take the coming weeks' events, if any is missing;
   * resolves their names. Needs the table owner's rights.
   */
  ensureAhead(now: number): Promise<string[]>;
  /** The partitions, oldest first, and the tables a cut-short drop left detached (a cheap catalog read). */
  list(): Promise<EventPartition[]>;
  /** Runs `fn` alone across processes; resolves undefined (without running it) while another runs. */
  maintain<T>(fn: (m: PartitionMaintenance) => Promise<T>): Promise<T | undefined>;
}
