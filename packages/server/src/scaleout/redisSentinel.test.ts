import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { openRedisCounters, type RedisCounters, RedisTopologyError } from "../store/redis/redisCounters.js";
import { counterContract } from "../testing/contract/counters.js";
import { bearer, CHROME_HEADERS, CHROME_UA, makeTestApp } from "../testing/harness.js";
import {
  keysOn,
  redisServerOrSkip,
  type SentinelGroup,
  startSentinelGroup,
  stopRedisServers,
} from "../testing/redisServers.js";

/**
 * Warden's counters on a master found through Redis Sentinel, all started from Debian's
 * redis-server: a master and its replica (both with a password) and one Sentinel (with its own). The
 * counter contract through the Sentinel, verify scored through the app, the start refused for a
 * master the Sentinel does not know or a plain URL naming the Sentinel, and a failover: the master
 * killed, the replica promoted, counting resumed on it with the counts it had replicated.
 */
const SUITE = "Redis Sentinel: counters on the master the Sentinel names";
const group = redisServerOrSkip(SUITE, "the Redis Sentinel suite") ? await startSentinelGroup() : undefined;
afterAll(stopRedisServers);

if (group) {
  const { url, master, replica, sentinel, masterName, password } = group as SentinelGroup;
  const open = () => openRedisCounters({ url, commandTimeoutMs: 2000, keyPrefix: "contract:" });
  counterContract("redis through sentinel", open, open, { countersExpireThemselves: true });

  describe(SUITE, () => {
    const opened: RedisCounters[] = [];
    afterAll(async () => {
      for (const c of opened) await c.close();
    });
    const counters = async (keyPrefix: string) => {
      const c = await openRedisCounters({ url, commandTimeoutMs: 2000, keyPrefix });
      opened.push(c);
      return c;
    };

    it("finds the master through the Sentinel, with the master's password and the Sentinel's", async () => {
      const c = await counters("found:");
      const [reading] = await c.hit([{ name: "n", windowMs: 60_000, tenantId: "acme" }], 1_000_000);
      expect(reading?.current).toBe(1);
      await expect(c.ping()).resolves.toBeUndefined();
      expect((await keysOn(master)).filter((k) => k.startsWith("found:"))).toEqual([
        "found:{t:acme}c:n|60000:16",
      ]);
    });

    it("a master the Sentinel does not monitor, a Sentinel URL naming a server, or a plain URL naming the Sentinel: the start fails, naming WARDEN_REDIS_URL", async () => {
      await expect(
        openRedisCounters({
          url: url.replace(`/${masterName}?`, "/nosuchmaster?"),
          commandTimeoutMs: 2000,
        }),
      ).rejects.toThrow(
        `WARDEN_REDIS_URL names the master "nosuchmaster", which the Sentinel at 127.0.0.1:${sentinel.port} does not monitor`,
      );
      await expect(
        openRedisCounters({
          url: `redis+sentinel://127.0.0.1:${master.port}/${masterName}?sentinelPassword=${encodeURIComponent(password)}`,
          commandTimeoutMs: 2000,
        }),
      ).rejects.toThrow(
        `WARDEN_REDIS_URL names Sentinels, but 127.0.0.1:${master.port} is not one (redis_mode:standalone)`,
      );
      const plain = openRedisCounters({ url: sentinel.url, commandTimeoutMs: 2000 });
      await expect(plain).rejects.toThrow(RedisTopologyError);
      await expect(plain).rejects.toThrow(/WARDEN_REDIS_URL points at a Redis in sentinel mode/);
    });

    it("verify through the app is scored, its counts on the master", async () => {
      const t = await makeTestApp({
        env: { WARDEN_REDIS_URL: url, WARDEN_REDIS_KEY_PREFIX: "app:", WARDEN_STORE_TIMEOUT_MS: "2000" },
      });
      try {
        await t.tenant("acme");
        const { apiKey } = await t.key("acme");
        const res = await t.app.inject({
          method: "POST",
          url: "/v1/verify",
          headers: bearer(apiKey),
          payload: {
            action: "signup",
            subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "198.51.100.0/24" },
          },
        });
        expect(res.json()).toMatchObject({ degraded: false });
        expect((await keysOn(master)).filter((k) => k.startsWith("app:{t:acme}")).length).toBeGreaterThan(0);
        expect((await t.app.inject({ method: "GET", url: "/readyz/store" })).statusCode).toBe(200);
      } finally {
        await t.close();
      }
    });

    // Last: it takes the master away.
    it("survives a failover: the master killed, the replica promoted, counting resumes there with the counts it replicated", async () => {
      const c = await counters("failover:");
      const hit = () => c.hit([{ name: "fo", windowMs: 3_600_000, tenantId: "acme" }], 7_200_000);
      for (let i = 0; i < 3; i++) await hit();
      // The replica has the three counts before the master goes (replication is asynchronous).
      const direct = new Redis(master.url);
      expect(await direct.call("WAIT", "1", "2000")).toBe(1);
      direct.disconnect();
      await master.kill();
      const killed = Date.now();
      // No master answers until the Sentinel promotes the replica: readiness reports Redis down.
      let down = false;
      while (!down && Date.now() - killed < 1000)
        down = await c.ping().then(
          () => false,
          () => true,
        );
      expect(down).toBe(true);
      let reading: Awaited<ReturnType<typeof hit>>[number] | undefined;
      let failed = 0;
      while (reading === undefined && Date.now() - killed < 30_000) {
        try {
          [reading] = await hit();
        } catch {
          failed++;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const resumedMs = Date.now() - killed;
      process.stderr.write(
        `Sentinel failover: counting resumed ${resumedMs} ms after the kill (${failed} calls failed)\n`,
      );
      expect(reading?.current).toBe(4);
      const ask = new Redis(sentinel.url);
      try {
        const [, port] = (await ask.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName)) as string[];
        expect(Number(port)).toBe(replica.port);
      } finally {
        ask.disconnect();
      }
      expect((await keysOn(replica)).some((k) => k.startsWith("failover:{t:acme}"))).toBe(true);
    }, 45_000);
  });
}
