import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { tempDir } from "./harness.js";
import { skipLoudly } from "./skip.js";
import { freePort } from "./wardenProcess.js";

/**
 * Real Redis servers started by a test from Debian's redis-server (apt-get install redis-server):
 * lone servers, a Cluster of masters, a master with a replica and a Sentinel. Each on free loopback
 * ports with a temporary directory, no persistence (`--save "" --appendonly no`), killed after the
 * file's tests (its afterAll calls stopRedisServers) or when the test process exits.
 */
const REDIS_SERVER = process.env.WARDEN_TEST_REDIS_SERVER ?? "/usr/bin/redis-server";
const REDIS_CLI = process.env.WARDEN_TEST_REDIS_CLI ?? "/usr/bin/redis-cli";
const exec = promisify(execFile);

/**
 * Whether redis-server and redis-cli are installed; when not, a banner, and `suite` is registered as
 * skipped (failed under CI=true, where every suite must run).
 */
export function redisServerOrSkip(suite: string, what: string): boolean {
  const missing = [REDIS_SERVER, REDIS_CLI].filter((bin) => !existsSync(bin));
  if (missing.length === 0) return true;
  skipLoudly(
    suite,
    `${missing.join(" and ")} not installed (apt-get install redis-server redis-tools): ${what} is SKIPPED`,
  );
  return false;
}

export interface RedisProcess {
  port: number;
  url: string;
  /** The server's log so far (for failure messages). */
  log(): string;
  /** Kills the server (SIGKILL: no goodbye to its clients or peers) and waits for its exit. */
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
/**
 * Kills every server started here and not yet killed. Each test file that starts servers calls it in
 * its own afterAll: the test files of a project share this module (isolate: false), so a hook
 * registered here at import would run only for the first file that imported it, and the servers of
 * the files after it would outlive the run.
 */
export async function stopRedisServers(): Promise<void> {
  await Promise.all([...running].map((child) => stopChild(child)));
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await exited;
  }
  running.delete(child);
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once("error", () => resolve(false));
      srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
    });
  for (let i = 0; i < 100; i++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if ((await free(port)) && (await free(port + 10_000))) return port;
  }
  throw new Error("no free port pair for a cluster node");
}

/**
 * Starts redis-server with `args` (and `config` as its configuration file, which Sentinel rewrites)
 * and waits until it answers.
 */
export async function startRedisServer(
  options: { args?: string[]; config?: string; port?: number; password?: string; sentinel?: boolean } = {},
): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = tempDir("warden-redis-");
  const config = path.join(dir, "redis.conf");
  if (options.config !== undefined) writeFileSync(config, options.config);
  const args = [
    ...(options.config === undefined ? [] : [config]),
    ...(options.args ?? []),
    ...(options.sentinel ? ["--sentinel"] : []),
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    ...(options.sentinel ? [] : ["--save", "", "--appendonly", "no"]),
  ];
  const child = spawn(REDIS_SERVER, args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let out = "";
  for (const stream of [child.stdout, child.stderr]) stream?.on("data", (d: Buffer) => (out += String(d)));
  child.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : "";
  const url = `redis://${auth}127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}:\n${out}`);
    const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, connectTimeout: 500 });
    client.on("error", () => undefined);
    const up = await client
      .connect()
      .then(() => client.ping())
      .then(
        (pong) => pong === "PONG",
        () => false,
      );
    client.disconnect();
    if (up) break;
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`redis-server on ${port} did not answer within 10 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, url, log: () => out, kill: () => stopChild(child) };
}

export interface RedisCluster {
  nodes: RedisProcess[];
  /** WARDEN_REDIS_URL for it: redis+cluster:// with every node. */
  url: string;
}

/**
 * `masters` cluster nodes joined by `redis-cli --cluster create … --cluster-replicas 0` (slots split
 * evenly in port order), waited on until every node reports cluster_state:ok and knows the others.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const nodes = await Promise.all(
    Array.from({ length: masters }, async () => {
      const port = await freeClusterPort();
      return startRedisServer({
        port,
        args: [
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          `nodes-${port}.conf`,
          "--cluster-node-timeout",
          "2000",
        ],
      });
    }),
  );
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  await exec(REDIS_CLI, ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"]);
  const deadline = Date.now() + 20_000;
  for (const node of nodes) {
    const client = new Redis(node.url);
    try {
      for (;;) {
        const info = await client.cluster("INFO");
        if (info.includes("cluster_state:ok") && info.includes(`cluster_known_nodes:${masters}`)) break;
        if (Date.now() > deadline) throw new Error(`the cluster did not settle within 20 s:\n${info}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      client.disconnect();
    }
  }
  return { nodes, url: `redis+cluster://${addresses.join(",")}` };
}

export interface SentinelGroup {
  master: RedisProcess;
  replica: RedisProcess;
  sentinel: RedisProcess;
  masterName: string;
  /** The master's (and replica's) password. */
  password: string;
  /** WARDEN_REDIS_URL for it: redis+sentinel:// with the passwords. */
  url: string;
}

/**
 * A master and its replica, both requiring `password`, watched by one Sentinel (quorum 1, which
 * requires `sentinelPassword` of its clients) that calls the master down after 1 s without answers
 * and promotes the replica.
 */
export async function startSentinelGroup(
  password = "master-secret",
  sentinelPassword = "sentinel-secret",
): Promise<SentinelGroup> {
  const masterName = "wardenmaster";
  const auth = ["--requirepass", password, "--masterauth", password];
  const master = await startRedisServer({ args: auth, password });
  const replica = await startRedisServer({
    args: [...auth, "--replicaof", "127.0.0.1", String(master.port)],
    password,
  });
  const sentinel = await startRedisServer({
    sentinel: true,
    password: sentinelPassword,
    config: [
      `sentinel monitor ${masterName} 127.0.0.1 ${master.port} 1`,
      `sentinel auth-pass ${masterName} ${password}`,
      `sentinel down-after-milliseconds ${masterName} 1000`,
      `sentinel failover-timeout ${masterName} 5000`,
      `requirepass ${sentinelPassword}`,
      "",
    ].join("\n"),
  });
  // Sentinel learns of the replica from the master's INFO within seconds; a failover needs it.
  const client = new Redis(sentinel.url);
  try {
    const deadline = Date.now() + 20_000;
    while (((await client.call("SENTINEL", "REPLICAS", masterName)) as unknown[]).length === 0) {
      if (Date.now() > deadline) throw new Error("the Sentinel found no replica within 20 s");
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    client.disconnect();
  }
  const secret = encodeURIComponent;
  return {
    master,
    replica,
    sentinel,
    masterName,
    password,
    url: `redis+sentinel://:${secret(password)}@127.0.0.1:${sentinel.port}/${masterName}?sentinelPassword=${secret(sentinelPassword)}`,
  };
}

/** Every key on one node (a test's own servers hold only its keys). */
export async function keysOn(node: RedisProcess): Promise<string[]> {
  const client = new Redis(node.url);
  try {
    return await client.keys("*");
  } finally {
    client.disconnect();
  }
}
