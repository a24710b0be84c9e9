import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from "kysely";
import { describe, expect, it } from "vitest";
import type { Database } from "../schema.js";
import { abandonedWrites } from "./abandonedWrites.js";
import { reuseGuard } from "./reuseGuard.js";

/**
 * Settling waits for the server process that ran an abandoned write to exit, however many of
 * pg_terminate_backend's waits that takes: a COMMIT waiting for a busy disk's flush finishes before
 * the process exits (a CI run answered a committed batch degraded when one 1 s wait ran out). The
 * server is scripted here (what pg_stat_activity and pg_terminate_backend answer, call by call); the
 * real server's half is store/postgres/abandonedWrites.test.ts.
 */

/**
 * A database that answers each statement with the next of `answers` (past the last, a process that
 * never exits: each terminate waits its 1 ms and answers false) and records the statements.
 */
function scripted(answers: Record<string, unknown>[][]): { db: Kysely<Database>; sent: string[] } {
  const sent: string[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      sent.push(query.sql.replace(/\s+/g, " ").trim());
      const next = answers.shift();
      if (next) return { rows: next as R[] };
      await new Promise((r) => setTimeout(r, 1));
      return { rows: [{ ended: false }] as R[] };
    },
    // biome-ignore lint/correctness/useYield: streams are not used by the settling
    async *streamQuery() {
      throw new Error("not streamed");
    },
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: async () => undefined,
    commitTransaction: async () => undefined,
    rollbackTransaction: async () => undefined,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, sent };
}

/** An error as reuseGuard tags a statement given up on at query_timeout, ran by backend 4242. */
async function abandonedOnBackend4242(): Promise<unknown> {
  const timedOut = new Error("Query read timeout");
  const client = {
    processID: 4242,
    query: () => Promise.reject(timedOut),
    release: () => undefined,
    getTransactionStatus: () => "I",
  };
  const pool = { connect: async () => client, end: async () => undefined };
  const guarded = reuseGuard(pool as never);
  const conn = await guarded.connect();
  return (conn.query as unknown as (sql: string, p: unknown[]) => Promise<unknown>)("insert", []).then(
    () => undefined,
    (err: unknown) => err,
  );
}

const row = {
  sql: "select 1",
  parameters: [],
  query: { kind: "SelectQueryNode" },
} as unknown as CompiledQuery;

describe("settling a write abandoned by its connection", () => {
  it("asks again while the server process outlives one wait, then reads the write's row", async () => {
    const { db, sent } = scripted([
      [{ ended: false }],
      [{ ended: false }],
      [{ ended: true }],
      [{ "?column?": 1 }],
    ]);
    const settle = abandonedWrites(db, { behindPooler: false, patienceMs: 5_000, stepMs: 1 });
    expect(await settle(await abandonedOnBackend4242(), row)).toBe(true);
    expect(sent.filter((s) => s.includes("pg_terminate_backend"))).toHaveLength(3);
    expect(sent.at(-1)).toBe("select 1");
  });

  it("a process already gone is not waited for: the row is read at once (here it is not there)", async () => {
    const { db, sent } = scripted([[], []]);
    const settle = abandonedWrites(db, { behindPooler: false, patienceMs: 5_000, stepMs: 500 });
    expect(await settle(await abandonedOnBackend4242(), row)).toBe(false);
    expect(sent).toHaveLength(2);
  });

  it("past its patience the outcome is unknown: false, and the row is never read", async () => {
    const { db, sent } = scripted([]);
    const settle = abandonedWrites(db, { behindPooler: false, patienceMs: 30, stepMs: 1 });
    expect(await settle(await abandonedOnBackend4242(), row)).toBe(false);
    expect(sent.every((s) => s.includes("pg_terminate_backend"))).toBe(true);
  });

  it("behind a transaction pooler, or for an error that abandoned nothing, nothing is asked", async () => {
    const { db, sent } = scripted([]);
    expect(
      await abandonedWrites(db, { behindPooler: true, patienceMs: 5_000, stepMs: 1 })(
        await abandonedOnBackend4242(),
        row,
      ),
    ).toBe(false);
    expect(
      await abandonedWrites(db, { behindPooler: false, patienceMs: 5_000, stepMs: 1 })(
        new Error("duplicate key"),
        row,
      ),
    ).toBe(false);
    expect(sent).toHaveLength(0);
  });
});
