import { type ChildProcess, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { issueApiKey } from "@warden/server/dist/admin/apiKeys.js";
import { buildApp } from "@warden/server/dist/app.js";
import { loadConfig } from "@warden/server/dist/config.js";
import { buildDeps } from "@warden/server/dist/deps.js";
import { ALL_SCOPES } from "@warden/server/dist/domain.js";
import type { RemovedRows } from "@warden/server/dist/store/interfaces.js";
import {
  BEFORE_PARTITION,
  createWeeklyPartitions,
  WEEK_MS,
  weeklyPartitionName,
  weekStart,
} from "@warden/server/dist/store/postgres/eventPartitions.js";
import { openPostgresStore } from "@warden/server/dist/store/postgres/postgresStore.js";
import { EVENT_COLUMNS } from "@warden/server/dist/store/sql/hotStatements.js";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { startServerProcess } from "./startBenchServer.js";
import { steadyLoad } from "./steadyLoad.js";
import { body, SETTLE_SECONDS } from "./verifyLoad.js";

/**
 * Retention on PostgreSQL dropping a week of BENCH_PARTITION_EVENTS (1,000,000) events while verify
 * runs at BENCH_PARTITION_RATE (300) a second (docs/benchmarks.md, "Dropping a week"), after removing
 * the same week's events row by row for BENCH_PARTITION_ROWS_SECONDS (60), side by side. The week lies
 * 30 weeks back; 2% of its events carry a challenge, 1% a feedback observation and 0.5% a clear
 * whose re-verify is in the next week. Verify is measured alone in windows of BENCH_PARTITION_SECONDS
 * (15) until one is quiet (the seed's writes settled), then in windows from the moment the pass
 * starts until it has finished, then three windows after: each window's degraded share (a verify
 * past its deadline answers degraded) and p99. The pass reports how long it took and what it
 * removed.
 */
const EVENTS = Number(process.env.BENCH_PARTITION_EVENTS ?? 1_000_000);
const RATE = Number(process.env.BENCH_PARTITION_RATE ?? 300);
const SECONDS = Number(process.env.BENCH_PARTITION_SECONDS ?? 15);
/** How long the same week is removed row by row first, side by side (BENCH_PARTITION_ROWS_SECONDS). */
const ROW_BY_ROW_SECONDS = Number(process.env.BENCH_PARTITION_ROWS_SECONDS ?? 60);
const PG_URL = process.env.WARDEN_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const serving = process.argv[2] === "--serve";

/** The server in a process of its own, on the prepared database; it runs a retention pass when told. */
async function serve(url: string): Promise<void> {
  const config = loadConfig({
    ...process.env,
    WARDEN_DATABASE_URL: url,
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_LOG_LEVEL: "warn",
    // Its own passes keep everything: the bench starts the one pass it measures.
    WARDEN_RETENTION_DAYS: "forever",
  });
  const deps = await buildDeps(config);
  const { apiKey } = await issueApiKey(deps.store, {
    tenantId: "bench",
    scopes: [...ALL_SCOPES],
    logOnly: false,
    now: Date.now(),
  });
  const app = await buildApp(deps);
  const listening = await app.listen({ host: "127.0.0.1", port: 0 });
  await app.warmUp();
  process.on("message", (message: { remove?: number; keep?: string; forMs?: number }) => {
    const { remove, keep, forMs } = message;
    if (remove === undefined) return;
    const started = performance.now();
    // With `keep`, that tenant keeps its events: the week is not dropped, the others' events in it
    // go row by row, for `forMs` at most.
    void deps.store.removal
      .olderThan(
        async (tenantId) => (tenantId === keep ? undefined : remove),
        forMs === undefined ? undefined : AbortSignal.timeout(forMs),
      )
      .then((removed) => process.send?.({ removed, ms: Math.round(performance.now() - started) }));
  });
  process.stdout.write(`${JSON.stringify({ url: listening, apiKey })}\n`);
  process.once("SIGTERM", () => {
    void app
      .close()
      .then(() => deps.store.close())
      .then(() => process.exit(0));
  });
}

/**
 * The database as a year of use leaves it: weekly partitions from 30 weeks back (events_before holds
 * what is older), and the oldest week full. The week is filled as a table of its own and attached
 * (ATTACH builds its indexes), which is much faster than inserting into an indexed partition.
 */
async function prepare(db: Kysely<unknown>, week: number): Promise<void> {
  const nextWeek = weekStart(Date.now()) + WEEK_MS;
  await sql`alter table events detach partition ${sql.id(BEFORE_PARTITION)}`.execute(db);
  await sql`drop table ${sql.id(BEFORE_PARTITION)}`.execute(db);
  await sql`create table ${sql.id(BEFORE_PARTITION)} (like events including all)`.execute(db);
  await sql`alter table events attach partition ${sql.id(BEFORE_PARTITION)} for values from (minvalue) to (${sql.lit(week)})`.execute(
    db,
  );
  await createWeeklyPartitions(db, week + WEEK_MS, nextWeek);
  const name = weeklyPartitionName(week);
  await sql`create table ${sql.id(name)} (like events including defaults)`.execute(db);
  const started = performance.now();
  // Rows the size verify writes (about 1.3 KB of signals, reasons and costs; storageBench).
  const columns = sql.raw(EVENT_COLUMNS.join(", "));
  await sql`insert into ${sql.id(name)} (${columns})
    select 'evt_' || lpad(to_hex(i), 12, '0') || md5(i::text), 'bench', 'key_bench',
      ${sql.lit(week)} + (i::bigint * ${sql.lit(WEEK_MS - 1)}) / ${sql.lit(EVENTS)},
      'signup', 'example.com/signup', 's-' || md5(i::text), 'challenge', 'challenge', 'unknown', 0.5,
      '["Estimated abuse risk 0.31 (range 0.22–0.41); challenge had the lowest expected cost."]', 0, 'enforce',
      '{"falseAllow":1,"falseChallenge":1,"falseDeny":3}',
      '{"ua":"' || repeat(md5((i * 7)::text), 24) || '","ipNetwork":"203.0.113.0/24"}',
      'e1', 'p1', 'att-' || md5(i::text), 'model', 0.31, 0.22, 0.41, 0,
      md5((i % 50000)::text), '203.0.' || (i % 250) || '.0/24', '["risk_estimate"]'
    from generate_series(1, ${sql.lit(EVENTS)}) as i`.execute(db);
  await sql`insert into ${sql.id(name)} (${columns}) select 'evt_keeper', 'keeper', key_id, created_at, action, surface, session,
      decision, would_be_decision, actor_type, confidence, reasons, degraded, enforcement_mode, costs, signals, engine_version,
      policy_version, attempt, decided_by, risk_estimate, risk_low, risk_high, risk_raised, email_hash, network, reason_codes
    from ${sql.id(name)} limit 1`.execute(db);
  const inserted = performance.now();
  await sql`alter table events attach partition ${sql.id(name)} for values from (${sql.lit(week)}) to (${sql.lit(week + WEEK_MS)})`.execute(
    db,
  );
  const attached = performance.now();
  await sql`insert into challenges (id, tenant_id, event_id, session, method, difficulty, seed, instructions, issued_at, expires_at, attempt)
    select 'chl_' || e.id, e.tenant_id, e.id, e.session, 'proof_of_work', 4, 'seed', '{"type":"pow"}', e.created_at + 1, e.created_at + 600000, e.attempt
    from ${sql.id(name)} e where abs(hashtext(e.id)) % 100 < 2`.execute(db);
  await sql`insert into feedback (feedback_id, tenant_id, event_id, identity, outcome, value, unit, source, observed_at, received_at, status, seq)
    select 'fb_' || e.id, e.tenant_id, e.id, md5(e.id), 'credit_burn', 5, 'usd', null, e.created_at + 2, e.created_at + 2, 'effective', 1
    from ${sql.id(name)} e where abs(hashtext(e.id)) % 100 = 50`.execute(db);
  // An attempt whose re-verify lies in the next week goes with it.
  await sql`insert into events (${columns}) select e.id || '_rev', e.tenant_id, e.key_id, e.created_at + ${sql.lit(WEEK_MS)}, e.action, e.surface,
      e.session, 'allow', 'allow', e.actor_type, e.confidence, e.reasons, e.degraded, e.enforcement_mode, e.costs, e.signals,
      e.engine_version, e.policy_version, e.attempt, 'clear', null, null, null, 0, e.email_hash, e.network, e.reason_codes
    from ${sql.id(name)} e where abs(hashtext(e.id)) % 200 = 7`.execute(db);
  await sql`insert into event_clears (tenant_id, event_id, challenge_id, redeemed_at, reverify_event_id)
    select e.tenant_id, e.id, 'chl_' || e.id, e.created_at + ${sql.lit(WEEK_MS)}, e.id || '_rev'
    from ${sql.id(name)} e where abs(hashtext(e.id)) % 200 = 7`.execute(db);
  // As autovacuum leaves a week past its inserts (its visibility map set): the drop reads the week
  // through its key's index only.
  await sql`vacuum (analyze)`.execute(db);
  await sql`checkpoint`.execute(db).catch(() => undefined);
  const { rows } = await sql<{ bytes: string }>`select pg_total_relation_size(${name}) as bytes`.execute(db);
  process.stdout.write(
    `seeded ${EVENTS} events into ${name} (${(Number(rows[0]?.bytes) / 1e9).toFixed(2)} GB with indexes): ` +
      `rows ${((inserted - started) / 1000).toFixed(0)} s, attach (indexes) ${((attached - inserted) / 1000).toFixed(0)} s\n`,
  );
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const database = `warden_bench_${randomBytes(5).toString("hex")}`;
  await admin.query(`create database ${database}`);
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  const week = weekStart(Date.now()) - 30 * WEEK_MS;
  let child: ChildProcess | undefined;
  try {
    // Migrations and the bench's tenant, then the history.
    const store = await openPostgresStore({ url: url.toString(), statementTimeoutMs: 5000, poolSize: 2 });
    for (const id of ["bench", "keeper"])
      await store.tenants.create({ id, rawPii: false, logOnly: false, createdAt: week });
    await store.close();
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }),
    });
    try {
      await prepare(db, week);
    } finally {
      await db.destroy();
    }
    const server = await startServerProcess(
      "retention",
      fileURLToPath(import.meta.url),
      ["--serve", url.toString()],
      {
        ipc: true,
      },
    );
    child = server.child;
    const endpoint = {
      origin: server.url,
      path: "/v1/verify",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body,
    };
    const row = (label: string, run: Awaited<ReturnType<typeof steadyLoad>>) => {
      const sent = Math.round(RATE * SECONDS);
      const share = (((run.degraded ?? 0) + run.non2xx + run.errors) / sent) * 100;
      process.stdout.write(`| ${label} | ${share.toFixed(2)}% | ${run.p50} | ${run.p99} | |\n`);
    };
    process.stdout.write(
      `\nverify at ${RATE} req/s (open loop, windows of ${SECONDS} s after ${SETTLE_SECONDS} s not counted)\n\n` +
        "| window | degraded share | p50 ms | p99 ms | the pass's steps; what verify's backends waited on (samples every 50 ms) |\n| --- | ---: | ---: | ---: | --- |\n",
    );
    // The seed leaves gigabytes for the disk to write back: the pass is measured from a settled
    // machine, once a window alone answers no more than 0.5% degraded (at most 12 windows).
    execFileSync("sync");
    await steadyLoad([endpoint], SETTLE_SECONDS, RATE);
    for (let n = 1; n <= 12; n++) {
      const alone = await steadyLoad([endpoint], SECONDS, RATE);
      row(`alone (${n})`, alone);
      if ((alone.degraded ?? 0) + alone.non2xx + alone.errors <= RATE * SECONDS * 0.005) break;
    }
    /** A retention pass in the server, verify measured in windows until it ends, then three more. */
    const pass = async (label: string, message: { remove: number; keep?: string; forMs?: number }) => {
      const sampler = await sampleBackends(url.toString());
      const row = (label: string, run: Awaited<ReturnType<typeof steadyLoad>>) => {
        const sent = Math.round(RATE * SECONDS);
        const share = (((run.degraded ?? 0) + run.non2xx + run.errors) / sent) * 100;
        process.stdout.write(
          `| ${label} | ${share.toFixed(2)}% | ${run.p50} | ${run.p99} | ${sampler.window()} |\n`,
        );
      };
      let done: { removed: RemovedRows; ms: number } | undefined;
      const removal = new Promise<{ removed: RemovedRows; ms: number }>((resolve) =>
        server.child.once("message", (m) => resolve(m as { removed: RemovedRows; ms: number })),
      ).then((d) => {
        done = d;
      });
      server.child.send(message);
      for (let n = 1; done === undefined; n++) {
        row(`${label}, ${(n - 1) * SECONDS}–${n * SECONDS} s`, await steadyLoad([endpoint], SECONDS, RATE));
      }
      await removal;
      for (let n = 1; n <= 3; n++) row(`after it (${n})`, await steadyLoad([endpoint], SECONDS, RATE));
      await sampler.stop();
      return done as { removed: RemovedRows; ms: number };
    };
    // Side by side: first the same week row by row (tenant "keeper" holds one of its events, so it is
    // not dropped) for ROW_BY_ROW_SECONDS, then the week dropped.
    const rows = await pass("row by row", {
      remove: week + WEEK_MS,
      keep: "keeper",
      forMs: ROW_BY_ROW_SECONDS * 1000,
    });
    const drop = await pass("dropping the week", { remove: week + WEEK_MS });
    const rate = rows.removed.events / (rows.ms / 1000);
    process.stdout.write(
      `\nrow by row: ${JSON.stringify(rows.removed)} in ${(rows.ms / 1000).toFixed(1)} s (${Math.round(rate)} events a second: ` +
        `the week's ${EVENTS} in about ${Math.round(EVENTS / rate / 60)} min)\n` +
        `dropping the week: ${JSON.stringify(drop.removed)} in ${(drop.ms / 1000).toFixed(1)} s\n`,
    );
  } finally {
    if (child) {
      child.kill("SIGTERM");
      await new Promise((resolve) => child?.once("exit", resolve));
    }
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
  }
}

/**
 * What the database's backends do, sampled every 50 ms from pg_stat_activity: the retention pass's
 * step (by its statement: detach, the key read, a table's rows hanging off the week, the drop; "rest"
 * between them) and what verify's backends were waiting on. `window()` names what was seen since it
 * was last called, most frequent first.
 */
async function sampleBackends(url: string): Promise<{ window(): string; stop(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url, application_name: "bench-sampler" });
  await client.connect();
  const steps = new Map<string, number>();
  const waits = new Map<string, number>();
  let samples = 0;
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const stepOf = (q: string): string | undefined => {
    if (/detach partition/i.test(q)) return "detach";
    if (/select max\(id\) as last/i.test(q)) return "key read";
    const hanging = /delete from "?(\w+)"? t\s+where t\.ctid/i.exec(q);
    if (hanging) return `rows off it: ${hanging[1]}`;
    if (/^drop table/i.test(q.trim())) return "drop";
    if (/delete from "?events"?/i.test(q)) return "row by row";
    return undefined;
  };
  let stopped = false;
  // A failed look (the database restarting, say) ends the sampling; stop() reports it.
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await client.query<{ query: string; state: string; wait: string | null }>(
        `select query, state, wait_event_type || ':' || wait_event as wait from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
      samples++;
      let step: string | undefined;
      for (const r of rows) {
        const s = r.state === "active" ? stepOf(r.query) : undefined;
        if (s) step = s;
        else if (r.state === "active" && r.wait && /insert into|commit|update/i.test(r.query))
          bump(waits, r.wait);
      }
      bump(steps, step ?? "rest");
      await new Promise((r) => setTimeout(r, 50));
    }
  })().catch((err: unknown) => err);
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
  return {
    window() {
      const text = `${top(steps, 4)}; ${top(waits, 3) || "no waits"} (${samples} samples)`;
      steps.clear();
      waits.clear();
      samples = 0;
      return text;
    },
    async stop() {
      stopped = true;
      const failed = await loop;
      await client.end();
      if (failed) throw failed;
    },
  };
}

if (serving) await serve(process.argv[3] as string);
else await main();
