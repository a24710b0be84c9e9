import { describe, expect, it } from "vitest";
import { storeContract } from "../../testing/contract/store.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { redisPrefixOrSkip, TEST_REDIS_URL } from "../../testing/redis.js";
import { StoreUnavailableError } from "../interfaces.js";
import { openPostgresStore } from "../postgres/postgresStore.js";
import { openRedisCounters, withRedisCounters } from "./redisCounters.js";

const prefix = await redisPrefixOrSkip(
  "store contract: postgres + redis counters",
  "the Redis counter contract",
);
const schema = prefix
  ? await postgresSchemaOrSkip(
      "store contract: postgres + redis counters",
      "the Redis counter contract (it runs on PostgreSQL)",
    )
  : undefined;
if (prefix && schema) {
  // Two stores = two pools and two Redis connections, as two Warden processes would have.
  const open = async () =>
    withRedisCounters(
      await openPostgresStore({ url: TEST_POSTGRES_URL, statementTimeoutMs: 5000, poolSize: 4, schema }),
      await openRedisCounters({ url: TEST_REDIS_URL, commandTimeoutMs: 2000, keyPrefix: prefix }),
    );
  storeContract("postgres + redis counters", open, open, { countersExpireThemselves: true });
}

describe("redis counters when Redis is unreachable", () => {
  it("fail fast with StoreUnavailableError, without queueing", async () => {
    // Port 1 on loopback: nothing listens there.
    const counters = await openRedisCounters({ url: "redis://127.0.0.1:1", commandTimeoutMs: 50 });
    // Refused as sent, with no connection to write to: a command queued for the connection would end
    // at the command timeout instead ("Command timed out").
    const refused =
      /redis (counters\.hit|ping): Stream isn't writeable and enableOfflineQueue options is false$/;
    const hit = counters.hit([{ name: "x", windowMs: 60_000 }], Date.now());
    await expect(hit).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(hit).rejects.toThrow(refused);
    const ping = counters.ping();
    await expect(ping).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(ping).rejects.toThrow(refused);
    await counters.close();
  });
});
