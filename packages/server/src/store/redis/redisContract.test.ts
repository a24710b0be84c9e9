import { describe, expect, it } from "vitest";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { redisPrefixOrSkip, TEST_REDIS_URL } from "../../testing/redis.js";
import { storeContract } from "../../testing/storeContract.js";
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
    const started = Date.now();
    await expect(counters.hit([{ name: "x", windowMs: 60_000 }], Date.now())).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    await expect(counters.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(200);
    await counters.close();
  });
});
