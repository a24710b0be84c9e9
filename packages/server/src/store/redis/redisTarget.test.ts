import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../config.js";
import { parseRedisUrl, redactRedisUrl } from "./redisTarget.js";

describe("WARDEN_REDIS_URL names one server, a Cluster or Sentinels", () => {
  it("redis:// and rediss:// are one server, as before", () => {
    expect(parseRedisUrl("redis://:secret@cache:6380/2")).toEqual({
      kind: "server",
      url: "redis://:secret@cache:6380/2",
    });
    expect(parseRedisUrl("rediss://cache").kind).toBe("server");
  });

  it("redis+cluster:// lists seed nodes (port 6379 when left out), with credentials and TLS", () => {
    expect(parseRedisUrl("redis+cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002")).toEqual({
      kind: "cluster",
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 6379 },
        { host: "::1", port: 7002 },
      ],
      tls: false,
    });
    expect(parseRedisUrl("rediss+cluster://warden:p%40ss@a:7000/")).toEqual({
      kind: "cluster",
      nodes: [{ host: "a", port: 7000 }],
      tls: true,
      username: "warden",
      password: "p@ss",
    });
  });

  it("redis+sentinel:// lists Sentinels (port 26379 when left out) and names the master, its database and the Sentinels' password", () => {
    expect(parseRedisUrl("redis+sentinel://s1,s2:26380/mymaster")).toEqual({
      kind: "sentinel",
      sentinels: [
        { host: "s1", port: 26379 },
        { host: "s2", port: 26380 },
      ],
      masterName: "mymaster",
      db: 0,
      tls: false,
    });
    expect(parseRedisUrl("rediss+sentinel://:m@s1/main%20one/3?sentinelPassword=x%26y")).toEqual({
      kind: "sentinel",
      sentinels: [{ host: "s1", port: 26379 }],
      masterName: "main one",
      db: 3,
      tls: true,
      password: "m",
      sentinelPassword: "x&y",
    });
  });

  it.each([
    ["cache:6379", /must start with redis:\/\/, rediss:\/\/ \(one server\), redis\+cluster:\/\//],
    ["redis://a:7000,b:7001", /names several hosts: use redis\+cluster:\/\/ .* or redis\+sentinel:\/\//],
    ["redis+cluster://a:7000/1", /a Redis Cluster has only database 0: remove "\/1"/],
    ["redis+cluster://a:7000,", /"" is not a host\[:port\]/],
    ["redis+cluster://a:99999", /"a:99999" is not a host\[:port\]/],
    ["redis+cluster://a:7000?tls=1", /unknown parameter "tls"/],
    ["redis+sentinel://s:26379", /names no master: add the name Sentinel monitors it by/],
    ["redis+sentinel://s/master/x", /ends in \/<master name>\[\/<database number>\]/],
    [
      "redis+sentinel://s/master?password=x",
      /unknown parameter "password"; the one known is sentinelPassword/,
    ],
    ["redis+sentinel://s/%zz", /malformed %-escape/],
  ])("refuses %j at start-up, naming WARDEN_REDIS_URL: %s", (url, message) => {
    expect(() => loadConfig({ WARDEN_REDIS_URL: url })).toThrow(ConfigError);
    expect(() => loadConfig({ WARDEN_REDIS_URL: url })).toThrow(message);
  });

  it("never shows a password in its messages", () => {
    expect(redactRedisUrl("redis+cluster://u:hunter2@a:1,b:2?x=1")).toBe("redis+cluster://u:***@a:1,b:2?x=1");
    expect(redactRedisUrl("redis+sentinel://s/m?sentinelPassword=hunter2")).toBe(
      "redis+sentinel://s/m?sentinelPassword=***",
    );
    expect(() => loadConfig({ WARDEN_REDIS_URL: "redis+cluster://u:hunter2@a:1,b:2/4" })).toThrow(
      /redis\+cluster:\/\/u:\*\*\*@a:1,b:2\/4/,
    );
    expect(() => loadConfig({ WARDEN_REDIS_URL: "redis+cluster://u:hunter2@a:1,b:2/4" })).not.toThrow(
      /hunter2/,
    );
    // A password alone, or one holding "@" or ":", is hidden whole.
    expect(redactRedisUrl("redis+cluster://hunter2@a:1,b:2")).toBe("redis+cluster://***@a:1,b:2");
    expect(redactRedisUrl("redis://hunter2@a:1,b:2")).toBe("redis://***@a:1,b:2");
    expect(redactRedisUrl("redis+cluster://u:p@ss@a:1")).toBe("redis+cluster://u:***@a:1");
    expect(redactRedisUrl("redis://:pa:ss@a:1/0")).toBe("redis://:***@a:1/0");
    for (const url of [
      "redis://hunter2@a:1,b:2",
      "redis+cluster://u:hunt@er2@a:1,b:99999",
      "redis+cluster://hunter2@",
    ]) {
      expect(() => loadConfig({ WARDEN_REDIS_URL: url })).toThrow(ConfigError);
      expect(() => loadConfig({ WARDEN_REDIS_URL: url })).not.toThrow(/hunter2|hunt|er2/);
    }
  });

  it("a key prefix with a brace is refused with a Cluster: it would put every key on one node", () => {
    expect(() =>
      loadConfig({ WARDEN_REDIS_URL: "redis+cluster://a:7000", WARDEN_REDIS_KEY_PREFIX: "{warden}:" }),
    ).toThrow(/WARDEN_REDIS_KEY_PREFIX: must not contain \{ or \} with a Redis Cluster/);
    expect(
      loadConfig({ WARDEN_REDIS_URL: "redis://a:7000", WARDEN_REDIS_KEY_PREFIX: "{warden}:" }).redisKeyPrefix,
    ).toBe("{warden}:");
  });
});
