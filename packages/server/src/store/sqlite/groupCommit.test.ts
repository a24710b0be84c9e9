import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../schema.js";
import { GroupCommit } from "./groupCommit.js";

let dir: string;
let raw: SQLite.Database;
let other: SQLite.Database;
let db: Kysely<Database>;
let commits: number;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-group-"));
  const file = path.join(dir, "g.db");
  raw = new SQLite(file);
  raw.pragma("journal_mode = WAL");
  raw.exec("create table t (k text primary key, v integer not null)");
  other = new SQLite(file, { readonly: true });
  commits = 0;
  db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: raw }),
    log: (event) => {
      if (event.level === "query" && event.query.sql === "commit") commits++;
    },
  });
});

afterEach(async () => {
  other.close();
  await db.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
});

const insert =
  (k: string, v = 1) =>
  (conn: Kysely<Database>) =>
    sql`insert into t (k, v) values (${k}, ${v})`.execute(conn).then(() => k);
/** What another connection sees: only committed rows. */
const committed = () =>
  (other.prepare("select k from t order by k").all() as { k: string }[]).map((r) => r.k);

describe("SQLite group commit", () => {
  it("writes queued in one turn share one commit and each resolves only once durable", async () => {
    const group = new GroupCommit(db, raw);
    const seen: string[][] = [];
    const writes = ["a", "b", "c"].map((k) =>
      group.run(insert(k), false).then((v) => {
        seen.push(committed());
        return v;
      }),
    );
    expect(await Promise.all(writes)).toEqual(["a", "b", "c"]);
    expect(commits).toBe(1);
    for (const s of seen) expect(s).toEqual(["a", "b", "c"]);
  });

  it("an early write resolves before its commit, and the write its caller makes next shares that commit", async () => {
    const group = new GroupCommit(db, raw);
    let seenAtEarly: string[] | undefined;
    const done = group.run(insert("counter"), false, true).then(async () => {
      seenAtEarly = committed();
      // The caller's next write, queued from the early result's continuation.
      return group.run(insert("event"), false);
    });
    await done;
    expect(seenAtEarly).toEqual([]);
    expect(committed()).toEqual(["counter", "event"]);
    expect(commits).toBe(1);
  });

  it("a write that is not early never joins a batch after it committed (no early job: one round)", async () => {
    const group = new GroupCommit(db, raw);
    await group.run(insert("a"), false).then(() => group.run(insert("b"), false));
    expect(commits).toBe(2);
    expect(committed()).toEqual(["a", "b"]);
  });

  it("a failing write fails alone; a multi-statement write is rolled back whole", async () => {
    const group = new GroupCommit(db, raw);
    const results = await Promise.allSettled([
      group.run(insert("a"), false),
      group.run(insert("a"), false),
      group.run(async (conn) => {
        await insert("m1")(conn);
        await insert("a")(conn);
      }, true),
      group.run(insert("b"), false, true),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect(committed()).toEqual(["a", "b"]);
    expect(commits).toBe(1);
  });

  it("while paused no batch starts; writes wait and go on resume", async () => {
    const group = new GroupCommit(db, raw);
    await group.pause();
    let done = false;
    const write = group.run(insert("a"), false).then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    expect(committed()).toEqual([]);
    group.resume();
    await write;
    expect(committed()).toEqual(["a"]);
  });

  it("after the store is closed a write fails at once instead of waiting", async () => {
    const group = new GroupCommit(db, raw);
    raw.close();
    await expect(group.run(insert("a"), false)).rejects.toThrow();
    await expect(group.run(insert("b"), false, true)).rejects.toThrow();
  });

  it("takes at most a bounded number of rounds into one batch, then commits", async () => {
    const group = new GroupCommit(db, raw);
    // A chain of early writes, each queuing the next from its result: it must not hold one
    // transaction open forever.
    const chain = async (i: number): Promise<void> => {
      if (i === 10) return;
      await group.run(insert(`k${i}`), false, true);
      return chain(i + 1);
    };
    await chain(0);
    await group.run(insert("last"), false);
    expect(committed()).toHaveLength(11);
    expect(commits).toBeGreaterThanOrEqual(3);
  });
});
