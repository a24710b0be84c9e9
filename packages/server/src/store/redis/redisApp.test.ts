import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../admin/apiKeys.js";
import type { Scope } from "../../domain.js";
import {
  bearer,
  CHROME_HEADERS,
  CHROME_UA,
  makeTestApp,
  type TestApp,
  windowStartClock,
} from "../../testing/harness.js";
import { redisPrefixOrSkip, TEST_REDIS_URL } from "../../testing/redis.js";

const body = {
  action: "signup",
  subject: { userAgent: CHROME_UA, headers: CHROME_HEADERS, ipTrunc: "198.51.100.0/24" },
};

/** warden_redis_fallback_calls on the app's /metrics. */
async function fallbackCalls(app: TestApp["app"]): Promise<number> {
  const text = (await app.inject({ method: "GET", url: "/metrics" })).body;
  const line = /^warden_redis_fallback_calls (\d+)$/m.exec(text);
  expect(line, "warden_redis_fallback_calls is exported").not.toBeNull();
  return Number(line?.[1]);
}

describe("verify with Redis unreachable", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp({
      env: { WARDEN_REDIS_URL: "redis://127.0.0.1:1", WARDEN_VERIFY_DEADLINE_MS: "30" },
    });
    await t.tenant("acme");
  });
  afterAll(() => t.close());

  it("falls back to the store's counters: verify is scored, not degraded, and counts its velocity there; /readyz/store reports Redis down", async () => {
    const { apiKey } = await t.key("acme");
    // Three scored answers. A verify that misses its deadline on a starved machine (three test files
    // share two cores) answers the degraded challenge, which a client retries: up to ten tries. A
    // fallback that did not work (every verify waiting on Redis) would never give three: a verify
    // whose counters waited for Redis (a connection's timeout is at least a second) answers the
    // degraded challenge at its 30 ms deadline, so each scored answer is one that did not wait.
    const scored = [];
    for (let i = 0; i < 10 && scored.length < 3; i++) {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(apiKey),
        payload: { ...body, session: "fallback" },
      });
      expect(res.statusCode).toBe(200);
      const v = res.json();
      if (v.degraded === true) expect(v.decision).toBe("challenge");
      else scored.push(v);
    }
    expect(scored).toHaveLength(3);
    for (const v of scored) expect(v).toMatchObject({ decision: "allow", degraded: false });
    // The velocity and rate-limit counts went to the SQL store's counters meanwhile.
    const db = new SQLite(t.dbFile, { readonly: true });
    try {
      const { n } = db.prepare("select count(*) as n from counters").get() as { n: number };
      expect(n).toBeGreaterThan(0);
    } finally {
      db.close();
    }
    // An operator sees it: the calls counted in the store instead are on /metrics.
    expect(await fallbackCalls(t.app)).toBeGreaterThanOrEqual(3);
    expect((await t.app.inject({ method: "GET", url: "/readyz/store" })).statusCode).toBe(503);
    const ready = await t.app.inject({ method: "GET", url: "/readyz" });
    expect({ status: ready.statusCode, body: ready.json() }).toMatchObject({
      status: 200,
      body: { ok: true, store: "down" },
    });
  });
});

const prefix = await redisPrefixOrSkip(
  "rate limits shared through Redis",
  "the shared Redis rate-limit test",
);
if (prefix) {
  describe("rate limits shared through Redis", () => {
    /**
     * Two apps, each with a store of its own, on one Redis (limit 4 a window), and one API key known
     * to both under the same id: the limit is counted per key id in Redis. `send` alternates them.
     */
    async function sharedLimit(
      keyPrefix: string,
      scope: Scope,
      send: (app: TestApp["app"], apiKey: string) => Promise<number>,
    ): Promise<number[]> {
      const env = {
        WARDEN_REDIS_URL: TEST_REDIS_URL,
        WARDEN_REDIS_KEY_PREFIX: keyPrefix,
        WARDEN_RATE_LIMIT_MAX: "4",
        // Redis's commands wait up to the store timeout, then the limit is counted in the app's own
        // store (the documented fallback), which the other app does not see: on a machine busy enough
        // to take 20 ms over a command, a fifth request was allowed. Sharing is what is tested here.
        WARDEN_STORE_TIMEOUT_MS: "1000",
      };
      // One clock for both: they count in one window, which began with the test.
      const clock = windowStartClock(60);
      const one = await makeTestApp({ env, clock });
      const two = await makeTestApp({ env, clock });
      try {
        await one.tenant("acme");
        await two.tenant("acme");
        const { apiKey, keyId } = await one.key("acme", { scopes: [scope] });
        const record = {
          id: keyId,
          tenantId: "acme",
          scopes: [scope],
          logOnly: false,
          createdAt: 1,
          revokedAt: null,
        };
        await two.store.apiKeys.create(record, hashApiKey(apiKey));
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) statuses.push(await send(i % 2 ? two.app : one.app, apiKey));
        expect((await one.app.inject({ method: "GET", url: "/readyz/store" })).statusCode).toBe(200);
        // Every call was counted in Redis: neither app fell back to its own store.
        expect([await fallbackCalls(one.app), await fallbackCalls(two.app)]).toEqual([0, 0]);
        return statuses;
      } finally {
        await one.close();
        await two.close();
      }
    }

    it("two apps on one Redis share one limit per key", async () => {
      const statuses = await sharedLimit(prefix, "verify:write", async (app, apiKey) =>
        app
          .inject({ method: "POST", url: "/v1/verify", headers: bearer(apiKey), payload: body })
          .then((r) => r.statusCode),
      );
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    });

    it("the routes off verify's path count in Redis too: two apps share one feedback limit per key", async () => {
      const payload = { eventId: "evt_none", outcome: "converted" };
      const statuses = await sharedLimit(`${prefix}fb:`, "feedback:write", async (app, apiKey) =>
        app
          .inject({ method: "POST", url: "/v1/feedback", headers: bearer(apiKey), payload })
          .then((r) => r.statusCode),
      );
      // Counted before the event is looked up: unknown events count too.
      expect(statuses).toEqual([404, 404, 404, 404, 429, 429]);
    });

    it("repeated form text on Redis counters: scored, one count per request, and the rate limit still applies", async () => {
      const t = await makeTestApp({
        clock: windowStartClock(60),
        env: {
          WARDEN_REDIS_URL: TEST_REDIS_URL,
          WARDEN_REDIS_KEY_PREFIX: prefix,
          WARDEN_RATE_LIMIT_MAX: "3",
        },
      });
      try {
        await t.tenant("forms");
        const { apiKey } = await t.key("forms");
        await t.store.policies.put(
          "forms",
          JSON.stringify({ velocity: { form_value: { perHour: 2 } } }),
          Date.now(),
        );
        const send = () =>
          t.app.inject({
            method: "POST",
            url: "/v1/verify",
            headers: bearer(apiKey),
            payload: {
              action: "signup",
              subject: { ...body.subject, formDataHashed: ["0123456789abcdef", "0123456789ABCDEF"] },
            },
          });
        const velocity = (reasons: string[]) => reasons.find((r) => r.startsWith("The same form text"));
        const answers = [];
        for (let i = 0; i < 3; i++) {
          const res = await send();
          expect(res.statusCode).toBe(200);
          expect(res.json().degraded).toBe(false);
          answers.push(velocity(res.json().reasons));
        }
        expect(answers.slice(0, 2)).toEqual([undefined, undefined]);
        expect(answers[2]).toMatch(/about 3 signup attempts/);
        expect((await send()).statusCode).toBe(429);
      } finally {
        await t.close();
      }
    });
  });
}
