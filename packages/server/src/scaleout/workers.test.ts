import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWarden, stdoutOf } from "../testing/cliSandbox.js";
import { FaultProxy } from "../testing/faultProxy.js";
import { tempDir } from "../testing/harness.js";
import { postgresDatabaseOrSkip } from "../testing/postgres.js";
import {
  createKey,
  freePort,
  serveUntilExit,
  startWarden,
  type WardenProcess,
} from "../testing/wardenProcess.js";

/**
 * `warden serve --workers N`: real processes. A primary forks N workers sharing PORT and
 * WARDEN_ADMIN_PORT, replaces a worker that dies, gives up (exit 1) when replacements keep failing to
 * start, and on SIGTERM lets every worker drain and exits 0.
 */
const dir = tempDir("warden-workers-");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Answer {
  status: number;
  body: string;
}

/**
 * One request on a connection of its own (the primary hands each new connection to the next worker),
 * failing after 10 s rather than hanging the suite.
 */
function request(url: string, route: string, init: { key?: string; body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
    const req = http.request(
      `${url}${route}`,
      {
        agent: false,
        timeout: 10_000,
        method: payload === undefined ? "GET" : "POST",
        headers: {
          ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
        },
      },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`no answer to ${route} within 10 s`)));
    req.end(payload);
  });
}

/** The processes whose parent is `pid` (Linux: /proc), i.e. the primary's workers. */
function childrenOf(pid: number): number[] {
  const out = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  return out
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The value of an unlabelled metric in Prometheus text, or undefined. */
const metric = (text: string, name: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};

/** The pids in the request log lines of `route` (pino's base fields name the process). */
const answeredBy = (output: string, route: string): Set<number> =>
  new Set(
    output
      .split("\n")
      .filter((l) => l.includes('"msg":"request completed"') && l.includes(`"url":"${route}"`))
      .map((l) => (JSON.parse(l) as { pid: number }).pid),
  );

const verifyBody = { action: "signup", subject: { userAgent: "curl/8.5.0" } };

/** Starts `serve --workers n` and waits until the admin listener counts n listening workers. */
async function startWorkers(
  env: Record<string, string>,
  n: number,
): Promise<{ warden: WardenProcess; admin: string }> {
  const adminPort = await freePort();
  const warden = await startWarden({ ...env, WARDEN_ADMIN_PORT: String(adminPort) }, 30_000, [
    "--workers",
    String(n),
  ]);
  const admin = `http://127.0.0.1:${adminPort}`;
  try {
    await until(`${n} workers listening`, async () => {
      const res = await request(admin, "/metrics").catch(() => undefined);
      return res && metric(res.body, "warden_workers_listening") === n ? true : undefined;
    });
  } catch (err) {
    // Its workers exit once their primary is gone (node:cluster ends them).
    warden.child.kill("SIGKILL");
    throw err;
  }
  return { warden, admin };
}

describe("warden serve --workers: what it refuses", () => {
  const env = { WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "refused.db")}`, WARDEN_LOG_LEVEL: "warn" };

  it("a bad --workers value is a usage error", async () => {
    const result = await serveUntilExit(env, ["--workers", "many"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--workers: must be a whole number or auto, got "many"');
  });

  it("more than one worker on SQLite is refused, naming PostgreSQL (its one write lock makes workers wait on each other)", async () => {
    const flag = await serveUntilExit(env, ["--workers", "2"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--workers: more than one worker needs PostgreSQL");
    const setting = await serveUntilExit({ ...env, WARDEN_WORKERS: "3" });
    expect(setting.code).toBe(2);
    expect(setting.stderr).toContain(
      "configuration error: WARDEN_WORKERS: more than one worker needs PostgreSQL",
    );
  });
});

const SUITE = "warden serve --workers on PostgreSQL";
const databaseUrl = await postgresDatabaseOrSkip(SUITE, "the workers suite");
const emptyDatabaseUrl = databaseUrl ? await postgresDatabaseOrSkip(SUITE, "the workers suite") : undefined;

if (databaseUrl && emptyDatabaseUrl) {
  describe(SUITE, () => {
    const env = {
      WARDEN_DATABASE_URL: databaseUrl,
      WARDEN_LOG_LEVEL: "info",
      WARDEN_VERIFY_DEADLINE_MS: "45",
      WARDEN_STORE_TIMEOUT_MS: "40",
    };
    let key = "";
    beforeAll(async () => {
      stdoutOf(await runWarden(env, ["tenant", "create", "acme"]));
      key = await createKey(env, "acme", undefined, runWarden);
    });

    it("the primary migrates an empty database (workers only check the schema), then N workers answer on one port and /metrics adds them up", async () => {
      const empty = { ...env, WARDEN_DATABASE_URL: emptyDatabaseUrl };
      const { warden, admin } = await startWorkers(empty, 2);
      try {
        const workers = childrenOf(warden.child.pid as number);
        expect(workers).toHaveLength(2);
        stdoutOf(await runWarden(empty, ["tenant", "create", "acme"]));
        const key = await createKey(empty, "acme", undefined, runWarden);
        const answers: Answer[] = [];
        for (let i = 0; i < 20; i++)
          answers.push(await request(warden.url, "/v1/verify", { key, body: verifyBody }));
        expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
        // Every worker answered some of the 20 (each request on a new connection, handed round-robin).
        const pids = await until("the request logs", () => {
          const seen = answeredBy(warden.output(), "/v1/verify");
          return seen.size === 2 ? seen : undefined;
        });
        expect([...pids].sort()).toEqual([...workers].sort());
        // Scraped from whichever worker takes the connection, the count is every worker's.
        for (let i = 0; i < 3; i++) {
          const text = (await request(admin, "/metrics")).body;
          const verdicts = text
            .split("\n")
            .filter((l) => l.startsWith("warden_verify_decisions_total{"))
            .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
          expect(verdicts).toBe(20);
          expect(metric(text, "warden_workers_listening")).toBe(2);
        }
        // The public port keeps the admin paths off, as one process does.
        expect((await request(warden.url, "/metrics")).status).toBe(404);
      } finally {
        expect(await warden.stop()).toBe(0);
      }
    }, 90_000);

    it("a worker killed with SIGKILL is replaced; the other answers meanwhile and the restart is counted", async () => {
      const { warden, admin } = await startWorkers(env, 2);
      try {
        const before = childrenOf(warden.child.pid as number);
        const victim = before[0] as number;
        process.kill(victim, "SIGKILL");
        // Once the primary has seen the death (a connection it hands over in that very instant is lost:
        // node:cluster's round-robin handoff, docs/deployment.md), the other worker takes every new one.
        await until("the primary to see the death", () =>
          warden.output().includes('"msg":"worker died: replacing it"') ? true : undefined,
        );
        for (let i = 0; i < 5; i++) expect((await request(warden.url, "/healthz")).status).toBe(200);
        const after = await until("a replacement worker", async () => {
          const now = childrenOf(warden.child.pid as number);
          const res = await request(admin, "/metrics").catch(() => undefined);
          return now.length === 2 &&
            !now.includes(victim) &&
            res &&
            metric(res.body, "warden_workers_listening") === 2
            ? now
            : undefined;
        });
        expect(after).toContain(before[1]);
        const text = (await request(admin, "/metrics")).body;
        expect(metric(text, "warden_worker_restarts_total")).toBe(1);
        expect(warden.output()).toContain('"msg":"worker died: replacing it"');
        expect(warden.output()).toContain('"msg":"replacement worker listening"');
      } finally {
        expect(await warden.stop()).toBe(0);
      }
    }, 90_000);

    it("SIGTERM: a request in flight on a worker finishes, every worker drains, the primary exits 0", async () => {
      const { warden } = await startWorkers({ ...env, WARDEN_SHUTDOWN_GRACE_MS: "10000" }, 2);
      const workers = childrenOf(warden.child.pid as number);
      const body = JSON.stringify(verifyBody);
      // A verify whose body is half sent when SIGTERM arrives.
      const socket = net.connect(Number(new URL(warden.url).port), "127.0.0.1");
      let answer = "";
      socket.on("data", (d: Buffer) => {
        answer += d.toString();
      });
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      socket.write(
        `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );
      await new Promise((r) => setTimeout(r, 300));
      const exited = warden.stop();
      await until("every worker draining", () =>
        (warden.output().match(/"msg":"shutting down: draining in-flight requests"/g) ?? []).length === 2
          ? true
          : undefined,
      );
      // New connections are refused while the in-flight request is still open.
      await expect(request(warden.url, "/healthz")).rejects.toThrow();
      socket.write(body.slice(10));
      await until("the answer", () => (answer.includes('"degraded"') ? true : undefined));
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toContain('"decision"');
      socket.end();
      await closed;
      expect(await exited).toBe(0);
      for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    }, 90_000);

    it("a worker of the first start that cannot listen (port taken) stops the primary with a non-zero exit", async () => {
      const taken = net.createServer();
      const port = await freePort();
      await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", () => resolve()));
      try {
        const result = await serveUntilExit({ ...env, PORT: String(port), HOST: "127.0.0.1" }, [
          "--workers",
          "2",
        ]);
        expect(result.code).not.toBe(0);
        expect(result.code).not.toBeNull();
        expect(result.stderr).toContain("EADDRINUSE");
      } finally {
        taken.close();
      }
    }, 60_000);

    it("replacements that keep failing to start (database unreachable) stop the primary with exit 1, after back-offs doubling from WARDEN_WORKER_RESTART_BACKOFF_MS", async () => {
      const proxy = await new FaultProxy("127.0.0.1", 5432).start();
      const viaProxy = new URL(databaseUrl);
      viaProxy.port = String(proxy.port);
      try {
        const { warden } = await startWorkers(
          {
            ...env,
            WARDEN_DATABASE_URL: viaProxy.toString(),
            WARDEN_SHUTDOWN_GRACE_MS: "1000",
            WARDEN_WORKER_RESTART_BACKOFF_MS: "50",
          },
          2,
        );
        expect((await request(warden.url, "/v1/verify", { key, body: verifyBody })).status).toBe(200);
        proxy.set("cut");
        process.kill(childrenOf(warden.child.pid as number)[0] as number, "SIGKILL");
        const code = await new Promise<number | null>((resolve) => {
          if (warden.child.exitCode !== null) resolve(warden.child.exitCode);
          else warden.child.once("exit", (c) => resolve(c));
        });
        expect(code).toBe(1);
        expect(warden.output()).toContain('"msg":"replacement workers keep failing to start: stopping"');
        expect(warden.output()).toContain('"failedStarts":5');
        const waits = warden
          .output()
          .split("\n")
          .filter((l) => l.includes('"msg":"worker died: replacing it"'))
          .map((l) => (JSON.parse(l) as { restartInMs: number }).restartInMs);
        // The SIGKILLed worker counts as a quick death too unless it had lived 30 s.
        expect(waits).toEqual(waits[0] === 0 ? [0, 50, 100, 200, 400] : [50, 100, 200, 400, 800]);
      } finally {
        await proxy.stop();
      }
    }, 120_000);
  });
}
