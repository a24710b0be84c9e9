import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solvePow } from "../operations/challenge/methods/proofOfWork/proofOfWork.js";
import { tempDir } from "../testing/harness.js";
import { postgresDatabaseOrSkip, TEST_POSTGRES_URL } from "../testing/postgres.js";
import { skipLoudly } from "../testing/skip.js";
import {
  freePort,
  runWardenBinary,
  serveUntilExit,
  startWardens,
  stdoutOf,
  type WardenProcess,
} from "../testing/wardenProcess.js";

/**
 * Warden through Debian's PgBouncer (1.18: no max_prepared_statements) in transaction mode, as
 * docs/deployment.md tells operators to run it. PgBouncer lends its 4 server connections to the
 * processes' 66 client connections one transaction at a time. Without WARDEN_PG_POOLER a `warden
 * serve` exits 1 on its first connection, naming that setting (PgBouncer refuses statement_timeout,
 * or drops it when told to ignore it); with it but no statement_timeout on the role, naming the ALTER
 * ROLE. With both, three CLI commands migrate the fresh database at once, and three processes answer
 * concurrent verifies, feedback and challenges with no statement errors (degraded only past verify's
 * deadline) and replay idempotent verifies across one another.
 */
const SUITE = "warden processes through PgBouncer in transaction mode";
const PGBOUNCER = [process.env.WARDEN_TEST_PGBOUNCER, "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find(
  (candidate): candidate is string => candidate !== undefined && existsSync(candidate),
);
const SERVER_CONNECTIONS = 4;
/** How many times a late answer is sent (other test files may load the machine when run alone). */
const ATTEMPTS = 10;

const database = PGBOUNCER
  ? await postgresDatabaseOrSkip(SUITE, "the PgBouncer suite")
  : skipLoudly(
      SUITE,
      "PgBouncer is not installed (apt-get install pgbouncer): the PgBouncer suite is SKIPPED",
    );

interface PgBouncer {
  /** `databaseUrl` through this PgBouncer. */
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** A PgBouncer of its own on a free port in front of TEST_POSTGRES_URL's server, logging to stderr. */
async function startPgBouncer(
  databaseUrl: string,
  settings: Record<string, string> = {},
): Promise<PgBouncer> {
  const upstream = new URL(TEST_POSTGRES_URL);
  const user = decodeURIComponent(upstream.username || "postgres");
  const port = await freePort();
  const dir = tempDir("warden-pgbouncer-");
  const ini = path.join(dir, "pgbouncer.ini");
  const users = path.join(dir, "users.txt");
  // auth_type trust: clients are not asked for a password; the file names the users PgBouncer knows
  // and gives the password it logs in to PostgreSQL with.
  writeFileSync(users, `"${user}" "${decodeURIComponent(upstream.password)}"\n`);
  const config = {
    listen_addr: "127.0.0.1",
    listen_port: String(port),
    unix_socket_dir: "",
    auth_type: "trust",
    auth_file: users,
    pool_mode: "transaction",
    default_pool_size: String(SERVER_CONNECTIONS),
    max_client_conn: "500",
    logfile: "",
    pidfile: "",
    // One line for each client's login (connectionsTo counts them).
    log_connections: "1",
    // The test reads SHOW POOLS on the admin console.
    admin_users: user,
    ...settings,
  };
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${upstream.hostname} port=${upstream.port || "5432"}`,
      "[pgbouncer]",
      ...Object.entries(config).map(([k, v]) => `${k} = ${v}`),
      "",
    ].join("\n"),
  );
  // PgBouncer will not run as root: as root, it drops to nobody, who must read its files.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    chmodSync(dir, 0o755);
    chmodSync(ini, 0o644);
    chmodSync(users, 0o644);
  }
  const child: ChildProcess = spawn(PGBOUNCER as string, [...(asRoot ? ["-u", "nobody"] : []), ini], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  // "close", not "exit": the output is read to its end.
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${port}`;
  // The readiness probe connects to another database than the one the tests give Warden, so that
  // connectionsTo never counts it.
  const probe = new URL(url);
  probe.pathname = upstream.pathname;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}:\n${out}`);
    const client = new pg.Client({ connectionString: probe.toString(), connectionTimeoutMillis: 1000 });
    client.on("error", () => undefined);
    const up = await client
      .connect()
      .then(() => client.query("select 1"))
      .then(
        () => true,
        () => false,
      );
    await client.end().catch(() => undefined);
    if (up) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`pgbouncer did not answer within 10 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: url.toString(),
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * How many connections clients opened through a PgBouncer to `databaseUrl`'s database, from its
 * output once it has stopped: the login of each, or, before any login, its refusal of a startup
 * parameter (which only Warden sends; the readiness probe connects to another database).
 */
function connectionsTo(output: string, databaseUrl: string): number {
  const database = new URL(databaseUrl).pathname.slice(1);
  return output
    .split("\n")
    .filter(
      (line) =>
        / C-0x[0-9a-f]+: /.test(line) &&
        (line.includes(`login attempt: db=${database} `) || /unsupported startup parameter: \S+=/.test(line)),
    ).length;
}

/** A `warden serve` that is expected not to start, with a spool of its own on a free port. */
const failingServe = (env: Record<string, string>) =>
  serveUntilExit({
    WARDEN_DEGRADED_SPOOL_DIR: path.join(tempDir(), "spool"),
    HOST: "127.0.0.1",
    PORT: "0",
    ...env,
  });

/** What a statement error through a transaction pooler looks like in a process's output. */
const STATEMENT_ERRORS =
  /prepared statement|unsupported startup parameter|does not exist|protocol violation/i;
/** Why a verify may answer degraded on this loaded machine: its deadline, and the store's timeouts. */
const DEADLINE_CAUSES =
  /deadline of [\d.]+ ms exceeded|Query read timeout|timeout exceeded when trying to connect|Connection terminated due to connection timeout|statement timeout/;

if (database) {
  describe(SUITE, () => {
    const bouncers: PgBouncer[] = [];
    afterAll(async () => {
      await Promise.all(bouncers.map((b) => b.stop()));
    });

    // "On its first connection": the start-up check of what PostgreSQL receives (postgresStore.ts,
    // checkConnections) opens one connection before anything else and fails the start there, instead
    // of the pools' connections failing while the start-up reads retry. PgBouncer's count of Warden's
    // connections proves it whatever the machine's speed.
    it("without WARDEN_PG_POOLER, a warden serve exits 1 on its first connection, naming it: PgBouncer refuses statement_timeout", async () => {
      const bouncer = await startPgBouncer(database);
      bouncers.push(bouncer);
      const result = await failingServe({ WARDEN_DATABASE_URL: bouncer.url });
      await bouncer.stop();
      expect(result.stderr).toMatch(/unsupported startup parameter: statement_timeout/);
      expect(result.stderr).toMatch(/set WARDEN_PG_POOLER=transaction/);
      expect(result.code).toBe(1);
      expect(connectionsTo(bouncer.output(), database)).toBe(1);
    }, 30_000);

    it("without WARDEN_PG_POOLER, a warden serve exits 1 on its first connection, naming it: PgBouncer drops the ignored parameters", async () => {
      const bouncer = await startPgBouncer(database, {
        ignore_startup_parameters: "statement_timeout, options",
      });
      bouncers.push(bouncer);
      const result = await failingServe({ WARDEN_DATABASE_URL: bouncer.url });
      await bouncer.stop();
      expect(result.stderr).toMatch(/did not receive Warden's connection parameters/);
      expect(result.stderr).toMatch(/set WARDEN_PG_POOLER=transaction/);
      expect(result.code).toBe(1);
      expect(connectionsTo(bouncer.output(), database)).toBe(1);
    }, 30_000);

    it("with WARDEN_PG_POOLER=transaction but no statement_timeout on the role, a warden serve exits 1 on its first connection, saying what to set", async () => {
      const bouncer = await startPgBouncer(database);
      bouncers.push(bouncer);
      const result = await failingServe({
        WARDEN_DATABASE_URL: bouncer.url,
        WARDEN_PG_POOLER: "transaction",
      });
      await bouncer.stop();
      expect(result.stderr).toMatch(/ALTER ROLE \S+ SET statement_timeout = '10s'/);
      expect(result.code).toBe(1);
      expect(connectionsTo(bouncer.output(), database)).toBe(1);
    }, 30_000);

    describe("with WARDEN_PG_POOLER=transaction", () => {
      let bouncer: PgBouncer;
      let procs: WardenProcess[] = [];
      let env: Record<string, string>;
      let key: string;
      const at = (i: number) => procs[i % procs.length] as WardenProcess;
      const call = async (i: number, path: string, body: unknown, headers: Record<string, string> = {}) => {
        const res = await fetch(`${at(i).url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };
      /**
       * A call the loaded machine answered late, sent again as the documented clients do: a verify
       * answered degraded (past its deadline), or a 503 (past the store's deadline, retried with the
       * same Idempotency-Key), to the next process after a backoff, at most ATTEMPTS times in all.
       */
      const scored = async (i: number, path: string, body: unknown, headers: Record<string, string> = {}) => {
        for (let attempt = 1; ; attempt++) {
          const res = await call(i + attempt - 1, path, body, headers);
          if ((res.json.degraded !== true && res.status !== 503) || attempt === ATTEMPTS) return res;
          await new Promise((r) => setTimeout(r, 25 * attempt));
        }
      };
      /** Runs `fn` over 0..n-1, `width` at a time. */
      const inParallel = async <T>(n: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> => {
        const results: T[] = new Array(n);
        let next = 0;
        await Promise.all(
          Array.from({ length: width }, async () => {
            for (let i = next++; i < n; i = next++) results[i] = await fn(i);
          }),
        );
        return results;
      };
      /** The most server and client connections PgBouncer had for the database while sampling. */
      const most = { servers: 0, clients: 0 };
      let sampler: NodeJS.Timeout | undefined;
      let adminConsole: pg.Client | undefined;

      beforeAll(async () => {
        // As docs/deployment.md says (scoped to this database: the role is the test server's own).
        const owner = new pg.Client({ connectionString: TEST_POSTGRES_URL });
        await owner.connect();
        try {
          const name = new URL(database).pathname.slice(1);
          await owner.query(`alter role current_user in database ${name} set statement_timeout = '10s'`);
        } finally {
          await owner.end();
        }
        bouncer = await startPgBouncer(database);
        bouncers.push(bouncer);
        env = {
          WARDEN_DATABASE_URL: bouncer.url,
          WARDEN_PG_POOLER: "transaction",
          WARDEN_LOG_LEVEL: "warn",
          // Generous: three servers, PgBouncer, PostgreSQL and the test share two cores.
          WARDEN_VERIFY_DEADLINE_MS: "45",
          WARDEN_STORE_TIMEOUT_MS: "40",
        };
        // PgBouncer's admin console counts its connections (SHOW POOLS) while the processes run.
        const admin = new URL(bouncer.url);
        const name = admin.pathname.slice(1);
        admin.pathname = "/pgbouncer";
        adminConsole = new pg.Client({ connectionString: admin.toString() });
        await adminConsole.connect();
        sampler = setInterval(() => {
          adminConsole
            ?.query<Record<string, string | number>>("SHOW POOLS")
            .then(({ rows }) => {
              for (const row of rows.filter((r) => r.database === name)) {
                const sum = (prefix: string) =>
                  Object.entries(row)
                    .filter(([k]) => k.startsWith(prefix) && !k.includes("cancel"))
                    .reduce((n, [, v]) => n + Number(v), 0);
                most.servers = Math.max(most.servers, sum("sv_"));
                most.clients = Math.max(most.clients, sum("cl_"));
              }
            })
            .catch(() => undefined);
        }, 50);
        // Three CLI commands at once migrate the fresh database at once: Kysely's session-level
        // migration lock would not hold through PgBouncer (postgresStore.ts). Creating the tenant
        // first also keeps the processes off the first-run demo tenant.
        (
          await Promise.all([
            runWardenBinary(env, ["tenant", "create", "acme"]),
            runWardenBinary(env, ["tenant", "list"]),
            runWardenBinary(env, ["tenant", "list"]),
          ])
        ).map((run) => stdoutOf(run));
        try {
          procs = await startWardens([env, env, env]);
        } catch (err) {
          throw new Error(`${(err as Error).message}\nPgBouncer:\n${bouncer.output()}`);
        }
        const created = stdoutOf(
          await runWardenBinary(env, [
            "key",
            "create",
            "--tenant",
            "acme",
            "--scopes",
            "verify:write,challenge:write,feedback:write",
            "--json",
          ]),
        );
        key = (JSON.parse(created) as { apiKey: string }).apiKey;
      }, 45_000);
      afterAll(async () => {
        clearInterval(sampler);
        await adminConsole?.end();
        const codes = await Promise.all(procs.map((p) => p.stop()));
        expect(codes).toEqual(procs.map(() => 0));
        // No statement failed anywhere: no prepared statement missing on another server connection
        // or already there, no startup parameter refused.
        for (const p of procs) expect(p.output()).not.toMatch(STATEMENT_ERRORS);
        const causes = new Map<string, number>();
        for (const p of procs) {
          for (const line of p
            .output()
            .split("\n")
            .filter((l) => l.includes('"verify degraded"'))) {
            const cause = (/"message":"([^"]*)"/.exec(line)?.[1] ?? line).replace(/[\d.]+ ms/, "N ms");
            causes.set(cause, (causes.get(cause) ?? 0) + 1);
          }
        }
        console.log(`degraded verifies by cause: ${JSON.stringify(Object.fromEntries(causes))}`);
        // PgBouncer really lent its few server connections to the processes' many.
        expect(most.servers).toBeGreaterThan(0);
        expect(most.servers).toBeLessThanOrEqual(SERVER_CONNECTIONS);
        expect(most.clients).toBeGreaterThan(2 * SERVER_CONNECTIONS);
      });

      it("answers 300 concurrent verifies over three processes, degraded only past the deadline", async () => {
        const body = (i: number) => ({
          action: "signup",
          session: `s-${i}`,
          subject: { userAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0" },
        });
        // Fresh processes answer their first requests slowly (compilation, connections opening).
        await inParallel(60, 3, (i) => call(i, "/v1/verify", body(-1 - i)));
        const verdicts = await inParallel(300, 12, (i) => call(i, "/v1/verify", body(i)));
        expect(verdicts.map((v) => v.status)).toEqual(verdicts.map(() => 200));
        const degraded = verdicts.filter((v) => v.json.degraded === true).length;
        // The processes' warnings reach this one through pipes.
        await new Promise((r) => setTimeout(r, 300));
        // Every degraded answer says why in its process's output: only ever the deadline or a timeout.
        const causes = procs.flatMap((p) =>
          p
            .output()
            .split("\n")
            .filter((line) => line.includes('"verify degraded"')),
        );
        expect(causes.filter((line) => !DEADLINE_CAUSES.test(line))).toEqual([]);
        expect(causes.length).toBeGreaterThanOrEqual(degraded);
        console.log(`through PgBouncer: ${degraded} of 300 verifies degraded, each past its deadline`);
      }, 30_000);

      it("replays idempotent verifies across processes", async () => {
        await inParallel(30, 4, async (i) => {
          const body = { action: "signup", session: `idem-${i}`, subject: { userAgent: "curl/8" } };
          // A first answer within the deadline (a degraded one is sent again under a new key: its
          // event claims the key only once written, after the answer).
          let headers: Record<string, string> = {};
          let first: Awaited<ReturnType<typeof call>> | undefined;
          for (let attempt = 0; attempt < ATTEMPTS && first?.json.degraded !== false; attempt++) {
            if (attempt > 0) await new Promise((r) => setTimeout(r, 25 * attempt));
            headers = { "idempotency-key": `k-${i}-${attempt}-${randomBytes(6).toString("hex")}` };
            first = await call(i + attempt, "/v1/verify", body, headers);
          }
          expect(first).toMatchObject({ status: 200, json: { degraded: false } });
          // The two other processes replay it.
          const replays = await Promise.all([1, 2].map((d) => scored(i + d, "/v1/verify", body, headers)));
          expect(replays.map((r) => [r.status, r.json.eventId])).toEqual([
            [200, first?.json.eventId],
            [200, first?.json.eventId],
          ]);
          const conflict = await scored(i + 1, "/v1/verify", { ...body, action: "other" }, headers);
          expect(conflict).toMatchObject({ status: 409, json: { code: "idempotency_conflict" } });
        });
      }, 30_000);

      it("stores feedback and completes challenges across processes", async () => {
        const scoredVerify = (i: number, session: string) =>
          scored(i, "/v1/verify", { action: "signup", session, subject: {} });
        const observedAt = new Date(Date.now() - 60_000).toISOString();
        await inParallel(40, 4, async (i) => {
          const eventId = (await scoredVerify(i, `fb-${i}`)).json.eventId;
          const headers = { "idempotency-key": `fb-${i}-${randomBytes(4).toString("hex")}` };
          const feedback = { eventId, outcome: "abuse_confirmed", source: "manual_review", observedAt };
          expect((await scored(i + 1, "/v1/feedback", feedback, headers)).status).toBe(200);
        });
        await inParallel(12, 4, async (i) => {
          const session = `ch-${i}-${randomBytes(4).toString("hex")}`;
          const verdict = await scoredVerify(i, session);
          const issued = await scored(i + 1, "/v1/challenge", { eventId: verdict.json.eventId, session });
          expect(issued.status).toBe(200);
          const { seed, difficulty } = issued.json.instructions as { seed: string; difficulty: number };
          const done = await scored(
            i + 2,
            "/v1/challenge",
            {
              challengeId: issued.json.challengeId,
              session,
              proof: { nonce: solvePow(seed, difficulty).nonce },
            },
            { "idempotency-key": `done-${i}-${randomBytes(4).toString("hex")}` },
          );
          expect(done.json).toMatchObject({ ok: true });
          // The re-verify redeems the clear. One answered degraded may have redeemed it all the same
          // (its statement committed after the answer's deadline): the next is then scored without it.
          const reverify = {
            action: "signup",
            session,
            subject: {},
            context: { challengeId: issued.json.challengeId },
          };
          const answers: Awaited<ReturnType<typeof call>>[] = [];
          for (let attempt = 0; attempt < ATTEMPTS && answers.at(-1)?.json.degraded !== false; attempt++) {
            if (attempt > 0) await new Promise((r) => setTimeout(r, 25 * attempt));
            answers.push(await call(i + attempt, "/v1/verify", reverify));
          }
          const last = answers.at(-1);
          expect(last).toMatchObject({ status: 200, json: { degraded: false } });
          if (answers.length === 1) expect(last?.json.challengeCleared).toBe(true);
          else if (last?.json.challengeCleared !== true)
            expect(JSON.stringify(last?.json)).toMatch(/clear_not_honoured/);
        });
      }, 30_000);
    });
  });
}
