import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATION_NAMES } from "../store/migrations.js";
import { postgresDatabaseOrSkip, TEST_POSTGRES_URL } from "../testing/postgres.js";
import { buildPreviousRelease, PREVIOUS_RELEASE } from "../testing/previousRelease.js";
import { skipLoudly } from "../testing/skip.js";
import {
  serveUntilExit,
  startWarden,
  WARDEN_BIN,
  type WardenLaunch,
  type WardenProcess,
} from "../testing/wardenProcess.js";

/**
 * A rolling upgrade and a rollback on PostgreSQL, with the previous release's own code: a database
 * migrated by the previous release (PREVIOUS_RELEASE, its migrations the fixture checked here) is
 * migrated to this one by `warden migrate --runtime-role` while a previous-release process keeps
 * answering scored verdicts; this release then serves it as a runtime role without DDL rights
 * (`serve --no-migrate`), the previous release serves it again (`--no-migrate`, the rollback), and a
 * schema a later release contracted makes this release refuse loudly (start refused; /readyz 503).
 *
 * Why the previous release is built from git history rather than replayed from recorded statements:
 * a replay proves only the statements someone thought to record, and misses the start-up checks,
 * the housekeeping and the readiness probe, which is where a schema change bites an old process.
 * `git archive` of the pinned commit's server, compiled by this checkout's TypeScript against its
 * node_modules, costs about 20 s, inside CI's budget. CI clones the whole history; a shallow clone
 * fails this suite under CI and skips it loudly elsewhere.
 */
const SUITE = "rolling upgrade from the previous release";
const exec = promisify(execFile);
const HEAD: WardenLaunch = { command: process.execPath, args: [WARDEN_BIN] };
const PROCESS_ENV = {
  WARDEN_LOG_LEVEL: "info",
  WARDEN_VERIFY_DEADLINE_MS: "45",
  WARDEN_STORE_TIMEOUT_MS: "40",
};

const databaseUrl = await postgresDatabaseOrSkip(SUITE, "the rolling-upgrade suite");
const previous = databaseUrl ? await buildPreviousRelease() : undefined;
if (previous && "unavailable" in previous) skipLoudly(SUITE, `${previous.unavailable}: ${SUITE} is SKIPPED`);

if (databaseUrl && previous && "launch" in previous) {
  const role = `warden_rt_${randomBytes(4).toString("hex")}`;
  const asRole = new URL(databaseUrl);
  asRole.username = role;
  const owner = { WARDEN_DATABASE_URL: databaseUrl };
  const runtime = { WARDEN_DATABASE_URL: asRole.toString() };
  let admin: pg.Client;
  const running: WardenProcess[] = [];

  const cli = async (launch: WardenLaunch, env: Record<string, string>, ...args: string[]) => {
    const { stdout } = await exec(launch.command, [...launch.args, ...args], {
      env: { ...process.env, ...env },
      ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }),
    });
    return stdout;
  };
  const start = async (launch: WardenLaunch, env: Record<string, string>, args: string[] = []) => {
    const p = await startWarden({ ...PROCESS_ENV, ...env }, 30_000, args, launch);
    running.push(p);
    return p;
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`create role ${role} login`);
  }, 60_000);
  afterAll(async () => {
    for (const p of running) await p.stop();
    await admin?.query(`drop owned by ${role}`).catch(() => undefined);
    await admin?.end();
    const server = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await server.connect();
    await server.query(`drop role if exists ${role}`).catch(() => undefined);
    await server.end();
    previous.remove();
  });

  /** Verify requests one after another until stopped: each one's status and whether it was degraded. */
  function keepVerifying(url: string, apiKey: string) {
    const answers: { status: number; degraded?: boolean }[] = [];
    let going = true;
    const loop = (async () => {
      while (going) {
        const res = await fetch(`${url}/v1/verify`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ action: "signup", subject: {} }),
        });
        const body = (await res.json()) as { degraded?: boolean };
        answers.push({
          status: res.status,
          ...(body.degraded === undefined ? {} : { degraded: body.degraded }),
        });
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    return {
      answers,
      stop: async () => {
        going = false;
        await loop;
        return answers;
      },
    };
  }
  /** Every answer 200, at least `least` of them, and scored but for the deadline's rare miss. */
  const expectScored = (answers: readonly { status: number; degraded?: boolean }[], least: number) => {
    expect(answers.length).toBeGreaterThanOrEqual(least);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    const degraded = answers.filter((a) => a.degraded !== false).length;
    expect(degraded, `${degraded} of ${answers.length} answers degraded`).toBeLessThanOrEqual(
      answers.length / 10,
    );
  };
  const scoresNow = async (url: string, apiKey: string) => {
    const run = keepVerifying(url, apiKey);
    await new Promise((r) => setTimeout(r, 1500));
    expectScored(await run.stop(), 20);
  };

  describe(SUITE, () => {
    it("the previous release keeps scoring through `warden migrate --runtime-role`; this release serves as the runtime role; the previous one serves again (rollback); a contracted schema is refused loudly", async () => {
      // The previous release's schema, made by its own migrations.
      await cli(previous.launch, owner, "migrate");
      const executed = async () =>
        (await admin.query("select name from kysely_migration order by name")).rows.map((r) => r.name);
      expect(await executed()).toEqual([...PREVIOUS_RELEASE.migrations]);
      // Expand only: this release's migrations are the previous release's and then its own.
      expect(MIGRATION_NAMES.slice(0, PREVIOUS_RELEASE.migrations.length)).toEqual([
        ...PREVIOUS_RELEASE.migrations,
      ]);

      await cli(previous.launch, owner, "tenant", "create", "acme");
      const { apiKey } = JSON.parse(
        await cli(
          previous.launch,
          owner,
          "key",
          "create",
          "--tenant",
          "acme",
          "--scopes",
          "verify:write",
          "--json",
        ),
      ) as { apiKey: string };

      const old = await start(previous.launch, owner);
      await scoresNow(old.url, apiKey);
      const during = keepVerifying(old.url, apiKey);
      await new Promise((r) => setTimeout(r, 500));
      const migrated = await cli(HEAD, owner, "migrate", "--runtime-role", role);
      const migratedAt = during.answers.length;
      expect(migrated).toContain(`role ${role} may serve it`);
      await new Promise((r) => setTimeout(r, 1500));
      const answers = await during.stop();
      expectScored(answers, 40);
      // Once migrated, the previous release's answers are scored (a change it cannot survive makes
      // every one of them degraded from here on).
      expectScored(answers.slice(migratedAt), 20);
      expect(await executed()).toEqual([...MIGRATION_NAMES]);
      const oldReady = await fetch(`${old.url}/readyz/store`);
      expect(await oldReady.json()).toMatchObject({ ok: true, store: "up" });

      // This release as the runtime role: no DDL, and it scores.
      const serving = await start(HEAD, runtime, ["--no-migrate"]);
      await scoresNow(serving.url, apiKey);
      const ddl = new pg.Client({ connectionString: asRole.toString() });
      await ddl.connect();
      try {
        await expect(ddl.query("create table intruder (id int)")).rejects.toThrow(/permission denied/);
        await expect(ddl.query("alter table events add column intruder int")).rejects.toThrow(
          /must be owner/,
        );
        await expect(ddl.query("delete from kysely_migration")).rejects.toThrow(/permission denied/);
      } finally {
        await ddl.end();
      }

      // Rollback: the previous release on this release's schema, as the runtime role.
      await old.stop();
      const rolledBack = await start(previous.launch, runtime, ["--no-migrate"]);
      await scoresNow(rolledBack.url, apiKey);

      // A later release contracts what this one needs and raises the floor: this release refuses to
      // start, and a running process leaves rotation (/readyz 503) saying why in its log.
      await admin.query(
        "update schema_compatibility set oldest_build_knows = '9999_a_later_release' where id = 1",
      );
      const refused = await serveUntilExit({ ...PROCESS_ENV, ...runtime, WARDEN_LOG_LEVEL: "info" }, [
        "--no-migrate",
      ]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(
        /newer than this build of Warden can serve: it needs a build that knows migration 9999_a_later_release/,
      );
      const ready = await fetch(`${serving.url}/readyz`);
      expect({ status: ready.status, body: await ready.json() }).toMatchObject({
        status: 503,
        body: { ok: false, store: "ahead" },
      });
      expect((await fetch(`${serving.url}/readyz/store`)).status).toBe(503);
      expect(serving.output()).toMatch(/cannot serve the database's schema/);
      // Verify itself still answers: only the probes take the process out.
      const res = await fetch(`${serving.url}/v1/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ action: "signup", subject: {} }),
      });
      expect(res.status).toBe(200);
    }, 180_000);
  });
}
