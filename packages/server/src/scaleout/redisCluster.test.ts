import SQLite from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../config.js";
import { openRedisCounters, RedisTopologyError } from "../store/redis/redisCounters.js";
import { counterContract } from "../testing/contract/counters.js";
import { FaultProxy } from "../testing/faultProxy.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp, type TestApp, tempDir } from "../testing/harness.js";
import {
  keysOn,
  type RedisCluster,
  type RedisProcess,
  redisServerOrSkip,
  startRedisCluster,
  startRedisServer,
  stopRedisServers,
} from "../testing/redisServers.js";
import { serveUntilExit } from "../testing/wardenProcess.js";

/**
 * Warden's counters on a real Redis Cluster of three masters started from Debian's redis-server
 * (`redis-cli --cluster create`): the counter contract, verify scored through the app with each
 * tenant's counters on one node and the tenants on several, and the misconfigurations an operator
 * meets: a plain redis:// URL naming one cluster node (the start fails naming WARDEN_REDIS_URL; found
 * after the start, Redis is reported down and left alone), a cluster URL naming a lone server, a
 * master lost.
 */
const SUITE = "Redis Cluster: counters on three masters";
const cluster = redisServerOrSkip(SUITE, "the Redis Cluster suite") ? await startRedisCluster(3) : undefined;
afterAll(stopRedisServers);

const TENANTS = ["acme", "globex", "initech", "umbrella", "hooli", "stark"];
const body = (tenant: string) => ({
  action: "signup",
  session: `s-${tenant}`,
  subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "198.51.100.0/24" },
});

/** Which node holds each tenant's keys under `prefix` ({t:<tenant>} hash tags), by node port. */
async function tenantNodes(nodes: RedisProcess[], prefix: string): Promise<Map<string, Set<number>>> {
  const where = new Map<string, Set<number>>();
  for (const node of nodes) {
    for (const key of await keysOn(node)) {
      if (!key.startsWith(prefix)) continue;
      const tenant = /\{t:([^}]+)\}/.exec(key)?.[1];
      if (tenant === undefined) continue;
      const ports = where.get(tenant) ?? new Set<number>();
      ports.add(node.port);
      where.set(tenant, ports);
    }
  }
  return where;
}

function sqlCounterRows(t: TestApp): number {
  const db = new SQLite(t.dbFile, { readonly: true });
  try {
    return (db.prepare("select count(*) as n from counters").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

if (cluster) {
  const { url, nodes } = cluster as RedisCluster;
  const open = () => openRedisCounters({ url, commandTimeoutMs: 2000, keyPrefix: "contract:" });
  counterContract("redis cluster (three masters)", open, open, { countersExpireThemselves: true });

  describe(SUITE, () => {
    const apps: TestApp[] = [];
    afterAll(async () => {
      for (const t of apps) await t.close();
    });
    const app = async (env: Record<string, string>) => {
      const t = await makeTestApp({ env: { WARDEN_STORE_TIMEOUT_MS: "2000", ...env } });
      apps.push(t);
      return t;
    };

    it("verify through the app is scored, with every tenant's counters on one node and the tenants on several", async () => {
      const t = await app({ WARDEN_REDIS_URL: url, WARDEN_REDIS_KEY_PREFIX: "app:" });
      for (const tenant of TENANTS) {
        await t.tenant(tenant);
        const { apiKey } = await t.key(tenant);
        for (let i = 0; i < 2; i++) {
          const res = await t.app.inject({
            method: "POST",
            url: "/v1/verify",
            headers: bearer(apiKey),
            payload: body(tenant),
          });
          expect(res.statusCode).toBe(200);
          expect(res.json()).toMatchObject({ degraded: false });
        }
      }
      // Nothing fell back to the store's counters: every count went to the cluster.
      expect(sqlCounterRows(t)).toBe(0);
      const where = await tenantNodes(nodes, "app:");
      expect([...where.keys()].sort()).toEqual([...TENANTS].sort());
      for (const ports of where.values()) expect(ports.size).toBe(1);
      const used = new Set([...where.values()].flatMap((ports) => [...ports]));
      expect(used.size).toBeGreaterThan(1);
      const ready = await t.app.inject({ method: "GET", url: "/readyz/store" });
      expect(ready.statusCode).toBe(200);
    });

    it("a plain redis:// URL naming one cluster node: the start fails, naming WARDEN_REDIS_URL", async () => {
      const plain = (nodes[0] as RedisProcess).url;
      await expect(openRedisCounters({ url: plain, commandTimeoutMs: 2000 })).rejects.toThrow(
        RedisTopologyError,
      );
      const start = makeTestApp({ env: { WARDEN_REDIS_URL: plain } });
      await expect(start).rejects.toThrow(ConfigError);
      await expect(start).rejects.toThrow(
        /WARDEN_REDIS_URL: points at a Redis Cluster node.*redis\+cluster:\/\//,
      );
    });

    it("`warden serve` with that URL exits 2 by itself, its message naming WARDEN_REDIS_URL", async () => {
      const dir = tempDir();
      const result = await serveUntilExit({
        WARDEN_DATABASE_URL: `sqlite:${dir}/w.db`,
        WARDEN_DEGRADED_SPOOL_DIR: `${dir}/spool`,
        WARDEN_REDIS_URL: (nodes[0] as RedisProcess).url,
        HOST: "127.0.0.1",
        PORT: "0",
      });
      expect(result.stderr).toMatch(/configuration error: WARDEN_REDIS_URL: points at a Redis Cluster node/);
      // Exit code 2 is an exit of its own: serveUntilExit kills a process still running at 30 s.
      expect({ code: result.code, signal: result.signal }).toEqual({ code: 2, signal: null });
    }, 40_000);

    it("a plain URL whose Redis turns out to be a cluster node after the start: Redis is reported down, verify stays scored on the store's counters", async () => {
      const proxy = await new FaultProxy("127.0.0.1", (nodes[0] as RedisProcess).port).start();
      try {
        proxy.set("cut");
        const t = await app({ WARDEN_REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
        proxy.set("pass");
        // Redis answers again (within the 2 s reconnection backoff), and the probe on its connection
        // finds a cluster node.
        const deadline = Date.now() + 15_000;
        let error = "";
        while (!error.includes("WARDEN_REDIS_URL") && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 200));
          error = await t.deps.store.ping().then(
            () => "",
            (err: Error) => err.message,
          );
        }
        expect(error).toMatch(/WARDEN_REDIS_URL points at a Redis Cluster node/);
        await expect(t.store.ping()).resolves.toBeUndefined();
        expect((await t.app.inject({ method: "GET", url: "/readyz/store" })).statusCode).toBe(503);
        await t.tenant("late");
        const { apiKey } = await t.key("late");
        const res = await t.app.inject({
          method: "POST",
          url: "/v1/verify",
          headers: bearer(apiKey),
          payload: body("late"),
        });
        expect(res.json()).toMatchObject({ degraded: false });
        expect(sqlCounterRows(t)).toBeGreaterThan(0);
      } finally {
        await proxy.stop();
      }
    }, 40_000);

    it("a redis+cluster:// URL naming a lone server: the start fails, naming the node", async () => {
      const lone = await startRedisServer();
      try {
        await expect(
          openRedisCounters({ url: `redis+cluster://127.0.0.1:${lone.port}`, commandTimeoutMs: 2000 }),
        ).rejects.toThrow(`names a Redis Cluster, but 127.0.0.1:${lone.port} is not a cluster node`);
      } finally {
        await lone.kill();
      }
    });

    // Last: it takes a master away.
    it("a master killed: /readyz/store answers 503 and verify stays scored, counting in the store meanwhile", async () => {
      const t = await app({ WARDEN_REDIS_URL: url, WARDEN_REDIS_KEY_PREFIX: "lost:" });
      const keys = new Map<string, string>();
      for (const tenant of TENANTS) {
        await t.tenant(tenant);
        keys.set(tenant, (await t.key(tenant)).apiKey);
      }
      await (nodes[2] as RedisProcess).kill();
      const ready = await t.app.inject({ method: "GET", url: "/readyz/store" });
      expect(ready.statusCode).toBe(503);
      for (const [tenant, apiKey] of keys) {
        const res = await t.app.inject({
          method: "POST",
          url: "/v1/verify",
          headers: bearer(apiKey),
          payload: body(tenant),
        });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ degraded: false });
      }
      expect((await t.app.inject({ method: "GET", url: "/readyz" })).json()).toMatchObject({
        ok: true,
        store: "down",
      });
    }, 40_000);
  });
}
