import { randomBytes } from "node:crypto";
import { openPostgresStore } from "@warden/server/dist/store/postgres/postgresStore.js";
import { openSqliteStore } from "@warden/server/dist/store/sqlite/sqliteStore.js";
import autocannon from "autocannon";
import SQLite from "better-sqlite3";
import pg from "pg";
import { type BenchTarget, onEachStore } from "./benchStores.js";
import { body } from "./verifyLoad.js";

/**
 * What the store keeps per verify: BENCH_STORAGE_VERIFIES (50,000) realistic signups (browser
 * evidence, a hashed email, a /24, a session; each with an Idempotency-Key, as the SDK sends one)
 * against a fresh `warden serve` on SQLite and on PostgreSQL, then the bytes of each table with its
 * indexes (SQLite's dbstat; PostgreSQL's pg_total_relation_size) over the rows it holds. Events grow
 * with retention; stored answers live WARDEN_IDEMPOTENCY_TTL_HOURS; counters live a day or two.
 * Then how fast retention removes those events (with their stored answers), paced as housekeeping
 * paces it, while the server idles.
 */
const VERIFIES = Number(process.env.BENCH_STORAGE_VERIFIES ?? 50_000);
const TABLES = ["events", "idempotency", "counters"] as const;

interface TableSize {
  table: (typeof TABLES)[number];
  rows: number;
  bytes: number;
}

async function send(target: BenchTarget): Promise<number> {
  const result = await autocannon({
    url: `${target.url}/v1/verify`,
    connections: 16,
    amount: VERIFIES,
    method: "POST",
    headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" },
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, "idempotency-key": randomBytes(16).toString("hex") },
          body: body(),
        }),
      },
    ],
  });
  return result["2xx"];
}

/** SQLite: the pages of each table and of every index on it (dbstat), read through a connection of its own. */
function sqliteSizes(file: string): TableSize[] {
  const db = new SQLite(file, { readonly: true });
  try {
    return TABLES.map((table) => {
      const { bytes } = db
        .prepare(
          `select coalesce(sum(pgsize), 0) as bytes from dbstat
           where name in (select name from sqlite_schema where tbl_name = ?)`,
        )
        .get(table) as { bytes: number };
      const { rows } = db.prepare(`select count(*) as rows from ${table}`).get() as { rows: number };
      return { table, rows, bytes };
    });
  } finally {
    db.close();
  }
}

/** PostgreSQL: each table's heap, TOAST and indexes (pg_total_relation_size), after VACUUM of dead rows. */
async function postgresSizes(url: string): Promise<TableSize[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const sizes: TableSize[] = [];
    for (const table of TABLES) {
      // Counters are upserted: their dead row versions are not what the table keeps.
      await client.query(`vacuum ${table}`);
      const { rows } = await client.query(
        `select pg_total_relation_size($1::regclass) as bytes, (select count(*) from ${table}) as rows`,
        [table],
      );
      sizes.push({ table, rows: Number(rows[0].rows), bytes: Number(rows[0].bytes) });
    }
    return sizes;
  } finally {
    await client.end();
  }
}

/** Retention's pass over every event recorded: events removed a second. */
async function removalRate(url: string): Promise<number> {
  const store = url.startsWith("sqlite:")
    ? await openSqliteStore({ file: url.slice("sqlite:".length), busyTimeoutMs: 5000 })
    : await openPostgresStore({ url, statementTimeoutMs: 5000, patientTimeoutMs: 5000, poolSize: 2 });
  try {
    const started = performance.now();
    const { events } = await store.removal.olderThan(Date.now() + 60_000);
    return events / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
  }
}

async function measure(
  target: BenchTarget,
): Promise<{ answered: number; sizes: TableSize[]; removedPerSecond: number } | undefined> {
  const url = target.store?.WARDEN_DATABASE_URL;
  // Counters in Redis change nothing of what the database keeps per event.
  if (url === undefined || target.store?.WARDEN_REDIS_URL !== undefined) return undefined;
  const answered = await send(target);
  // Degraded answers' events (a verify past its deadline on this shared machine) are written just after.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const sizes = url.startsWith("sqlite:")
    ? sqliteSizes(url.slice("sqlite:".length))
    : await postgresSizes(url);
  return { answered, sizes, removedPerSecond: await removalRate(url) };
}

const results = await onEachStore(measure);
process.stdout.write(`\n${VERIFIES} verifies, each with an Idempotency-Key\n\n`);
process.stdout.write("| store | table | rows | MB | bytes a row |\n");
process.stdout.write("| --- | --- | ---: | ---: | ---: |\n");
for (const [store, result] of results) {
  if (!result) continue;
  process.stdout.write(`| ${store} | (verifies answered) | ${result.answered} | | |\n`);
  for (const { table, rows, bytes } of result.sizes) {
    const perRow = rows === 0 ? 0 : bytes / rows;
    process.stdout.write(
      `| ${store} | ${table} | ${rows} | ${(bytes / 1e6).toFixed(1)} | ${Math.round(perRow)} |\n`,
    );
  }
}
process.stdout.write("\n| store | retention removes (events a second, paced) |\n| --- | ---: |\n");
for (const [store, result] of results) {
  if (result) process.stdout.write(`| ${store} | ${Math.round(result.removedPerSecond)} |\n`);
}
