import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll } from "vitest";
import { redisAnswers } from "../store/redis/redisCounters.js";
import { skipLoudly } from "./skip.js";

/** The local server every developer and CI machine runs; override with WARDEN_TEST_REDIS_URL. */
export const TEST_REDIS_URL = process.env.WARDEN_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

const reachable = () => redisAnswers(TEST_REDIS_URL);

/**
 * A key prefix of its own for one test file, its keys deleted after the file's tests. When Redis
 * cannot be reached it says so in a banner, registers `suite` as skipped (never a silent pass) and
 * resolves undefined.
 */
export async function redisPrefixOrSkip(suite: string, what: string): Promise<string | undefined> {
  if (!(await reachable())) {
    return skipLoudly(suite, `Redis is not reachable at ${TEST_REDIS_URL}: ${what} is SKIPPED`);
  }
  const prefix = `warden-test-${randomBytes(6).toString("hex")}:`;
  afterAll(async () => {
    const admin = new Redis(TEST_REDIS_URL);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    admin.disconnect();
  });
  return prefix;
}
