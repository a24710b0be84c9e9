import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { CompiledQuery, Kysely, type QueryResult, SqliteDialect, sql } from "kysely";
import type { ReadMeter, Store } from "../interfaces.js";
import { StoreUnavailableError } from "../interfaces.js";
import { migrateToLatest, requireCurrentSchema } from "../migrations.js";
import type { Database } from "../schema.js";
import { createSqlStore } from "../sqlStore.js";
import { type CheckpointerOptions, startCheckpointer } from "./checkpointer.js";
import { GroupCommit } from "./groupCommit.js";
import { startReadWorker } from "./readWorker.js";

export interface SqliteOptions {
  /** File path, or ":memory:". */
  file: string;
  /**
   * How long a statement waits for another process's write lock before failing (SQLite busy timeout).
   * better-sqlite3 is synchronous, so this is the store call's deadline on request paths.
   */
  busyTimeoutMs: number;
  /** WAL checkpointing (tests shrink its thresholds); see checkpointer.ts. */
  checkpoint?: CheckpointerOptions;
  /** Bring the schema up to date (default), or only check that it is (SchemaBehindError if not). */
  migrate?: boolean;
}

/**
 * The embedded default store. WAL mode lets readers proceed while one process writes. Writes go
 * through group commit (groupCommit.ts): each batch starts with BEGIN IMMEDIATE, so it holds the write
 * lock from its first statement and a read-then-write inside it cannot be overtaken by another process.
 */
export async function openSqliteStore(opts: SqliteOptions): Promise<Store> {
  if (opts.file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(opts.file)), { recursive: true });
  let raw: SQLite.Database;
  try {
    raw = new SQLite(opts.file, { timeout: opts.busyTimeoutMs });
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    raw.pragma("foreign_keys = ON");
  } catch (err) {
    throw new StoreUnavailableError(`cannot open SQLite database ${opts.file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const cached = withStatementCache(raw, 256);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cached }) });
  try {
    if (opts.migrate === false) await requireCurrentSchema(db as unknown as Kysely<unknown>, "sqlite");
    else await migrateToLatest(db as unknown as Kysely<unknown>, "sqlite");
  } catch (err) {
    raw.close();
    throw err;
  }
  const group = new GroupCommit(db, raw);
  // On the main connection a read waits for an open write batch (Kysely's connection lock).
  const readHere = async <R>(query: CompiledQuery<R>, meter?: ReadMeter): Promise<R[]> => {
    const started = performance.now();
    try {
      return (await db.executeQuery(query)).rows;
    } finally {
      meter?.(performance.now() - started);
    }
  };
  const reader =
    opts.file === ":memory:" ? undefined : startReadWorker(opts.file, opts.busyTimeoutMs, readHere);
  const checkpointer =
    opts.file === ":memory:" ? undefined : startCheckpointer(raw, opts.file, group, opts.checkpoint, reader);
  return createSqlStore({
    db,
    writeTransaction: (fn) => group.run(fn, true),
    write: (fn, options) => group.run(fn, false, options?.early === true),
    tryExclusive: async () => true,
    serialize: async () => {
      // Every write batch already holds SQLite's single write lock (BEGIN IMMEDIATE).
    },
    holdRows: (select) => select,
    // Fifty events hold the thread about 5 ms; the rest leaves verify three quarters of it. A hundred
    // doubled the hold and verify's p99 during a pass (docs/benchmarks.md, "Storage and retention").
    removalPace: { chunk: 50, rest: 3 },
    overwritingDeleted: async (fn) => {
      const before = raw.pragma("secure_delete", { simple: true });
      raw.pragma("secure_delete = 1");
      try {
        return await fn();
      } finally {
        raw.pragma(`secure_delete = ${Number(before)}`);
      }
    },
    // One synchronous connection: inside a write job the batch holds it, and outside one a direct
    // call cannot interleave with anything. Only while a batch is open must outside reads wait for
    // it (through Kysely's connection lock), so they never see its uncommitted writes.
    execute: (conn, query) =>
      conn === db && group.active ? conn.executeQuery(query) : Promise.resolve(runDirect(cached, query)),
    report: (query, meter) => (reader ? reader.all(query, meter) : readHere(query, meter)),
    // Run as a write job: the batch's BEGIN IMMEDIATE must get the write lock.
    writeProbe: CompiledQuery.raw("select 1"),
    claimsInOneStatement: false,
    jsonArrayElements: (json, alias) => sql`json_each(${json}) as ${sql.id(alias)}`,
    jsonMember: (json, name) => sql<string | null>`json_extract(${json}, ${`$.${name}`})`,
    // Statements run to their end on the store's own threads: none is ever abandoned.
    keptDespite: async () => false,
    warmConnections: 1,
    close: async () => {
      await reader?.close();
      await checkpointer?.stop();
      await db.destroy();
    },
  });
}

/**
 * Kysely's SQLite driver prepares every query anew; compiling SQL is a large share of a short
 * statement's cost. Statements are cached by SQL text (bounded, least recently used dropped).
 * Reuse is safe: better-sqlite3 runs one statement at a time on this single connection.
 */
function withStatementCache(raw: SQLite.Database, max: number): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = raw.prepare.bind(raw);
  return new Proxy(raw, {
    get(target, prop, receiver) {
      if (prop !== "prepare") return Reflect.get(target, prop, receiver);
      return (source: string) => {
        let stmt = cache.get(source);
        if (stmt) {
          cache.delete(source);
        } else {
          stmt = prepare(source);
          if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        }
        cache.set(source, stmt);
        return stmt;
      };
    },
  });
}

function runDirect<R>(handle: SQLite.Database, query: CompiledQuery<R>): QueryResult<R> {
  const stmt = handle.prepare(query.sql);
  const params = query.parameters as unknown[];
  if (stmt.reader) return { rows: stmt.all(params) as R[] };
  const { changes } = stmt.run(params);
  return { rows: [], numAffectedRows: BigInt(changes) };
}

/** `sqlite:<path>` to a file path. */
export function sqliteFileFromUrl(url: string): string {
  return url.slice("sqlite:".length);
}
