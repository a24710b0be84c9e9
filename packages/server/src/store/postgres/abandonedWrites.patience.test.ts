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
 * Settling waits for the server process that ran an abandoned write to exit, however long that takes
 * within its patience: a COMMIT waiting for a busy disk's flush finishes before the process exits (a
 * CI run answered a committed batch degraded when one 1 s wait ran out). Every process being ended
 * is looked for in one statement a turn. The server is scripted here (what pg_stat_activity answers,
 * turn by turn); the real server's half is store/postgres/abandonedWrites.test.ts.
 */

type Presence = { pid: number; started: string }[];

/**
 * A database whose pg_stat_activity answers `presence` turn by turn (the last one for ever after),
 * whose row read answers `row`, and which records every statement.
 */
function scripted(presence: Presence[], row: Record<string, unknown>[] = [{ "?column?": 1 }]) {
  const sent: string[] = [];
  const terminated: number[][] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const text = query.sql.replace(/\s+/g, " ").trim();
      sent.push(text);
      if (text.includes("pg_terminate_backend")) {
        terminated.push([...(query.parameters[0] as number[])]);
        return { rows: [] };
      }
      if (text.includes("backend_start")) {
        const wanted = new Set(query.parameters[0] as number[]);
        const now = (presence.length > 1 ? presence.shift() : presence[0]) ?? [];
        return { rows: now.filter((p) => wanted.has(p.pid)) as R[] };
      }
      return { rows: row as R[] };
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
  const looks = () => sent.filter((t) => t.includes("backend_start")).length;
  return { db, sent, terminated, looks };
}

/** An error as reuseGuard tags a statement given up on at query_timeout, ran by backend `pid`. */
async function abandonedOn(pid: number): Promise<unknown> {
  const timedOut = new Error("Query read timeout");
  const client = {
    processID: pid,
    query: () => Promise.reject(timedOut),
    release: () => undefined,
    getTransactionStatus: () => "I",
  };
  const pool = { connect: async () => client, end: async () => undefined };
  const guarded = reuseGuard(pool as never);
  const conn = await guarded.connect();
  const failed = await (conn.query as unknown as (sql: string, p: unknown[]) => Promise<unknown>)(
    "insert",
    [],
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  // Handed back as Kysely hands it back: the guard's drain then fails (every query here times out),
  // so the connection is destroyed and the process must be ended.
  conn.release();
  return failed;
}

const row = {
  sql: "select 1",
  parameters: [],
  query: { kind: "SelectQueryNode" },
} as unknown as CompiledQuery;
const settleOptions = { behindPooler: false, patienceMs: 5_000, pollMs: 1 };

describe("settling a write abandoned by its connection", () => {
  it("ends the process once, waits while it is still there, then reads the write's row", async () => {
    const alive = [{ pid: 4242, started: "s1" }];
    const { db, sent, terminated, looks } = scripted([alive, alive, alive, []]);
    expect(await abandonedWrites(db, settleOptions)(await abandonedOn(4242), row)).toBe(true);
    expect(terminated).toEqual([[4242]]);
    expect(looks()).toBe(4);
    expect(sent.at(-1)).toBe("select 1");
  });

  it("a process already gone is not ended: the row is read at once (here it is not there)", async () => {
    const { db, sent, terminated } = scripted([[]], []);
    expect(await abandonedWrites(db, settleOptions)(await abandonedOn(4242), row)).toBe(false);
    expect(terminated).toEqual([]);
    expect(sent).toHaveLength(2);
  });

  it("past its patience the outcome is unknown: false, and the row is never read", async () => {
    const { db, sent } = scripted([[{ pid: 4242, started: "s1" }]]);
    const settle = abandonedWrites(db, { ...settleOptions, patienceMs: 30 });
    expect(await settle(await abandonedOn(4242), row)).toBe(false);
    expect(sent.some((t) => t === "select 1")).toBe(false);
  });

  it("a pid that a new process has taken over counts as gone, and the new process is never ended", async () => {
    const { db, terminated } = scripted([[{ pid: 4242, started: "s1" }], [{ pid: 4242, started: "s2" }]]);
    expect(await abandonedWrites(db, settleOptions)(await abandonedOn(4242), row)).toBe(true);
    expect(terminated).toEqual([[4242]]);
  });

  it("processes ended at once share one look a turn, each settled as it goes", async () => {
    const a = { pid: 4242, started: "s1" };
    const b = { pid: 4343, started: "s2" };
    const { db, terminated, looks } = scripted([[a, b], [a, b], [b], []]);
    const settle = abandonedWrites(db, settleOptions);
    const [errA, errB] = [await abandonedOn(4242), await abandonedOn(4343)];
    const both = await Promise.all([settle(errA, row), settle(errB, row)]);
    expect(both).toEqual([true, true]);
    expect(terminated.flat().sort()).toEqual([4242, 4343]);
    expect(looks()).toBe(4);
  });

  it("behind a transaction pooler, or for an error that abandoned nothing, nothing is asked", async () => {
    const { db, sent } = scripted([]);
    const pooled = abandonedWrites(db, { ...settleOptions, behindPooler: true });
    expect(await pooled(await abandonedOn(4242), row)).toBe(false);
    expect(await abandonedWrites(db, settleOptions)(new Error("duplicate key"), row)).toBe(false);
    expect(sent).toHaveLength(0);
  });
});
