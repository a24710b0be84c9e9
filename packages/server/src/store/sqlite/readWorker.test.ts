import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import SQLite from "better-sqlite3";
import { type CompiledQuery, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../../testing/harness.js";
import { startReadWorker } from "./readWorker.js";

const dir = tempDir();
const file = path.join(dir, "reads.db");
const setup = new SQLite(file);
setup.pragma("journal_mode = WAL");
setup.exec("create table t (n integer); insert into t values (1), (2), (3);");
afterAll(() => {
  setup.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const compiled = <R>(text: string, parameters: unknown[] = []): CompiledQuery<R> => ({
  sql: text,
  parameters,
  query: sql``.toOperationNode() as never,
  queryId: { queryId: "test" },
});
const noFallback = async (): Promise<never> => {
  throw new Error("fallback used");
};

describe("SQLite read worker", () => {
  it("answers on another thread: the event loop keeps turning while a slow read runs", async () => {
    const reader = startReadWorker(file, 1000, noFallback);
    try {
      // About a second of work for SQLite: a recursive count to ten million.
      const slow = reader.all<{ c: number }>(
        compiled(
          "with recursive r(i) as (select 1 union all select i + 1 from r where i < ?) select count(*) as c from r",
          [10_000_000],
        ),
      );
      let turns = 0;
      const ticker = setInterval(() => turns++, 1);
      const [{ c }] = (await slow) as [{ c: number }];
      clearInterval(ticker);
      expect(c).toBe(10_000_000);
      expect(turns).toBeGreaterThan(10);
    } finally {
      await reader.close();
    }
  });

  it("returns rows with their parameters, and the driver's error for a bad query", async () => {
    const reader = startReadWorker(file, 1000, noFallback);
    try {
      expect(await reader.all(compiled("select n from t where n >= ? order by n", [2]))).toEqual([
        { n: 2 },
        { n: 3 },
      ]);
      await expect(reader.all(compiled("select nope from t"))).rejects.toThrow(/no such column/);
    } finally {
      await reader.close();
    }
  });

  it("sees what the main connection committed", async () => {
    const reader = startReadWorker(file, 1000, noFallback);
    try {
      setup.prepare("insert into t values (4)").run();
      expect(await reader.all(compiled("select count(*) as c from t"))).toEqual([{ c: 4 }]);
    } finally {
      await reader.close();
    }
  });

  it("falls back to the caller's connection once the worker is gone", async () => {
    const reader = startReadWorker(file, 1000, async <R>() => [{ fallback: true }] as R[]);
    await reader.close();
    expect(await reader.all(compiled("select 1"))).toEqual([{ fallback: true }]);
  });

  it("starts in a process run with --input-type=module (the worker inherits that flag)", async () => {
    // The compiled module: npm test builds before it runs the tests.
    const compiledWorker = path.resolve(
      path.dirname(fileURLToPath(import.meta.url)),
      "../../../dist/store/sqlite/readWorker.js",
    );
    const child = `
const { startReadWorker } = await import(process.env.READ_WORKER);
const reader = startReadWorker(process.env.DB, 1000, async () => { throw new Error("fallback used"); });
const rows = await reader.all({ sql: "select count(*) as c from t", parameters: [] });
await reader.close();
process.stdout.write(JSON.stringify(rows));
`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", child], {
      env: { ...process.env, READ_WORKER: compiledWorker, DB: file },
    });
    expect(JSON.parse(stdout)).toEqual([{ c: expect.any(Number) }]);
  });
});
