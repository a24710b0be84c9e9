import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { openPostgresStore } from "../store/postgres/postgresStore.js";
import { bearer, makeTestApp } from "../testing/harness.js";
import { postgresDatabaseOrSkip, TEST_POSTGRES_URL } from "../testing/postgres.js";
import { skipLoudly } from "../testing/skip.js";
import { freePort, startWarden, type WardenProcess, wardenCli } from "../testing/wardenProcess.js";

/**
 * deploy/compose.yaml's two roles as its services run them, on this machine's PostgreSQL (a database
 * of its own) and Redis: the `roles` service's command (psql with deploy/postgres-roles.sql, the file
 * the service mounts) as the superuser, twice, as every `up` runs it; the `migrate` service's command
 * with the owner's URL; then the `warden` service's command (`serve --no-migrate`) with the runtime
 * role's URL and the compose file's settings: it starts on the schema it checks and takes the store's
 * write probe; what it opens (the store as the runtime role, without migrating) scores verifies in
 * process, where verify's deadline is the test app's, not the 30 ms this machine's load may overrun.
 * What is moved: the hosts `postgres` and `redis` to this
 * machine's, the ports to free ones, the role names to ones of this run (the roles are the cluster's,
 * shared by every suite), and `${…}` filled as Compose fills them. The runtime role creates no table,
 * and the service it runs scores. No container runs here (no Docker daemon): the images are not.
 */
const SUITE = "deploy/compose.yaml: the owner migrates, the runtime role serves";
const exec = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const DEPLOY = path.join(REPO, "deploy");

interface Service {
  command: string[];
  environment: Record<string, string>;
  volumes?: string[];
}
const compose = parseYaml(fs.readFileSync(path.join(DEPLOY, "compose.yaml"), "utf8")) as {
  services: Record<string, Service>;
};

/** `${NAME:?…}` and `${NAME:-default}` as Compose fills them from `vars`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Z_]+)(?::([?-])([^}]*))?\}/g,
    (_, name: string, kind?: string, rest?: string) => {
      const set = vars[name];
      if (set !== undefined && set !== "") return set;
      if (kind === "-") return rest ?? "";
      throw new Error(`compose would refuse: ${name} is not set (${rest})`);
    },
  );
}

/** PostgreSQL's client, as the `roles` service runs it (Debian's postgresql-client). */
const psql = fs.existsSync("/usr/bin/psql") ? "/usr/bin/psql" : undefined;
const dbUrl = psql
  ? await postgresDatabaseOrSkip(SUITE, "the compose roles test")
  : skipLoudly(SUITE, "psql is not installed: the compose roles test is SKIPPED");

if (dbUrl) {
  describe(SUITE, () => {
    const run = randomBytes(4).toString("hex");
    const owner = `warden_owner_${run}`;
    const runtime = `warden_runtime_${run}`;
    /** The compose file's role names as this run's. */
    const renamed = (text: string) =>
      text.replace(/\bwarden_(owner|runtime)\b/g, (_, which: string) =>
        which === "owner" ? owner : runtime,
      );
    const local = new URL(dbUrl);
    const vars = {
      WARDEN_PG_SUPERUSER_PASSWORD: `super-${run}`,
      WARDEN_OWNER_PASSWORD: `owner-${run}`,
      WARDEN_RUNTIME_PASSWORD: `runtime-${run}`,
    };
    /** A compose service's environment, filled, its URLs pointed at this machine's services. */
    const environment = (service: Service): Record<string, string> =>
      Object.fromEntries(
        Object.entries(service.environment).map(([name, value]) => {
          const filled = renamed(interpolate(String(value), vars));
          if (!/^(postgres|redis):\/\//.test(filled)) return [name, filled];
          const url = new URL(filled);
          if (url.protocol === "postgres:") {
            expect(url.hostname).toBe("postgres");
            url.hostname = local.hostname;
            url.port = local.port;
            url.pathname = local.pathname;
          } else {
            expect(url.hostname).toBe("redis");
            url.hostname = "127.0.0.1";
          }
          return [name, url.toString()];
        }),
      );
    const roles = compose.services.roles as Service;
    const migrate = compose.services.migrate as Service;
    const warden = compose.services.warden as Service;
    const admin = new pg.Client({ connectionString: dbUrl });
    let served: WardenProcess | undefined;

    /** The `roles` service's command, its mounted file read from deploy/, as this machine's superuser. */
    const runRoles = (env: Record<string, string>) => {
      const [command, ...args] = roles.command;
      expect(command).toBe("psql");
      const mounts = new Map(
        (roles.volumes ?? []).map((v) => {
          const [from, to] = v.split(":") as [string, string];
          return [to, path.resolve(DEPLOY, from)];
        }),
      );
      const hostArgs = args.map((a) => mounts.get(a) ?? a);
      expect(hostArgs.some((a) => a === path.join(DEPLOY, "postgres-roles.sql"))).toBe(true);
      return exec(psql as string, [...hostArgs, "-v", `owner=${owner}`, "-v", `runtime=${runtime}`], {
        env: {
          PATH: process.env.PATH ?? "",
          ...env,
          PGHOST: local.hostname,
          PGPORT: local.port || "5432",
          PGUSER: decodeURIComponent(new URL(TEST_POSTGRES_URL).username) || "postgres",
          PGDATABASE: local.pathname.slice(1),
        },
      });
    };

    afterAll(async () => {
      await served?.stop();
      await admin.query(`drop owned by ${owner}, ${runtime}`).catch(() => undefined);
      await admin.query(`drop role if exists ${owner}`).catch(() => undefined);
      await admin.query(`drop role if exists ${runtime}`).catch(() => undefined);
      await admin.end();
    });

    it("the roles script refuses to run without a password, then makes both roles and the owner's schema, twice alike", async () => {
      await admin.connect();
      const { WARDEN_RUNTIME_PASSWORD: _unset, ...withoutRuntime } = environment(roles);
      await expect(runRoles(withoutRuntime)).rejects.toThrow(/set WARDEN_RUNTIME_PASSWORD/);
      expect((await admin.query("select 1 from pg_roles where rolname = $1", [owner])).rowCount).toBe(0);
      for (let i = 0; i < 2; i++) await runRoles(environment(roles));
      const { rows } = await admin.query(
        `select r.rolname, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolcanlogin,
           has_schema_privilege(r.rolname, 'warden', 'CREATE') as creates_in_warden,
           has_schema_privilege(r.rolname, 'public', 'CREATE') as creates_in_public,
           has_database_privilege(r.rolname, current_database(), 'CREATE') as creates_schemas,
           (select nspowner::regrole::text from pg_namespace where nspname = 'warden') as schema_owner
         from pg_roles r where r.rolname in ($1, $2) order by r.rolname`,
        [owner, runtime],
      );
      const base = { rolsuper: false, rolcreatedb: false, rolcreaterole: false, rolcanlogin: true };
      expect(rows).toEqual([
        {
          rolname: owner,
          ...base,
          creates_in_warden: true,
          creates_in_public: false,
          creates_schemas: false,
          schema_owner: owner,
        },
        {
          rolname: runtime,
          ...base,
          creates_in_warden: false,
          creates_in_public: false,
          creates_schemas: false,
          schema_owner: owner,
        },
      ]);
    });

    it("the migrate service's command, as the owner, brings the schema up and grants the runtime role", async () => {
      expect(migrate.command[0]).toBe("migrate");
      const out = await wardenCli(environment(migrate), ...migrate.command.map(renamed));
      expect(out).toContain(`role ${runtime} may serve it`);
      const { rows } = await admin.query(
        "select count(*)::int as n from pg_tables where schemaname = 'warden' and tableowner = $1",
        [owner],
      );
      expect(rows[0].n).toBeGreaterThan(10);
    });

    it("the warden service's command, as the runtime role, starts on the checked schema and takes the store's writes", async () => {
      const env = environment(warden);
      expect(new URL(env.WARDEN_DATABASE_URL as string).username).toBe(runtime);
      expect(warden.command.slice(0, 1)).toEqual(["serve"]);
      env.WARDEN_ADMIN_PORT = String(await freePort());
      env.WARDEN_ADMIN_HOST = "127.0.0.1";
      // The store's probe given two seconds, not 20 ms, and one process instead of the file's two
      // workers (which took over a minute to start on this machine's two shared cores): this
      // machine's load is not what is tested, the roles are.
      env.WARDEN_STORE_TIMEOUT_MS = "2000";
      env.WARDEN_WORKERS = "1";
      const tenant = `compose-${run}`;
      await wardenCli(env, "tenant", "create", tenant);
      const made = JSON.parse(
        await wardenCli(env, "key", "create", "--tenant", tenant, "--scopes", "verify:write", "--json"),
      ) as { apiKey: string };
      served = await startWarden(env, 60_000, warden.command.slice(1));
      const running = served;
      const probe = await fetch(`${running.url}/readyz/store`).catch((err: unknown) => {
        throw new Error(`/readyz/store: ${String(err)}\n${running.output().slice(-4000)}`);
      });
      expect(probe.status, served.output().slice(-3000)).toBe(200);
      expect(await probe.json()).toMatchObject({ store: "up" });
      // Verify's 30 ms deadline is the service's own; on two shared cores a verify may miss it, and
      // the scoring is shown in process below. A role short of a right would log its refusal here.
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${served.url}/v1/verify`, {
          method: "POST",
          headers: { authorization: `Bearer ${made.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ action: "signup", subject: { ipTrunc: "203.0.113.0/24" } }),
        });
        expect(res.status).toBe(200);
      }
      expect(served.output()).not.toMatch(/permission denied|must be owner/);
      expect(await served.stop()).toBe(0);
      served = undefined;
    }, 120_000);

    it("the runtime role's store scores verifies, each event written, and the role may create and alter no table", async () => {
      const url = environment(warden).WARDEN_DATABASE_URL as string;
      // What `serve --no-migrate` opens, in process, where verify's deadline is the test app's.
      const store = await openPostgresStore({ url, migrate: false, statementTimeoutMs: 5000, poolSize: 2 });
      const t = await makeTestApp({ store, env: { WARDEN_STORE_TIMEOUT_MS: "2000" } });
      try {
        const tenant = `compose-app-${run}`;
        await t.tenant(tenant);
        const { apiKey } = await t.key(tenant, { scopes: ["verify:write"] });
        for (let i = 0; i < 3; i++) {
          const res = await t.app.inject({
            method: "POST",
            url: "/v1/verify",
            headers: bearer(apiKey),
            payload: { action: "signup", subject: { ipTrunc: "203.0.113.0/24" } },
          });
          expect(res.statusCode).toBe(200);
          expect(res.json().degraded).toBe(false);
        }
        const { rows } = await admin.query(
          "select count(*)::int as n from warden.events where tenant_id = $1 and degraded = 0",
          [tenant],
        );
        expect(rows[0].n).toBe(3);
      } finally {
        await t.close();
      }
      const asRuntime = new pg.Client({ connectionString: url });
      await asRuntime.connect();
      try {
        for (const table of ["warden.not_allowed", "public.not_allowed"]) {
          await expect(asRuntime.query(`create table ${table} (a int)`)).rejects.toThrow(/permission denied/);
        }
        await expect(asRuntime.query("alter table warden.events add column x int")).rejects.toThrow(
          /must be owner/,
        );
      } finally {
        await asRuntime.end();
      }
    });
  });
}
