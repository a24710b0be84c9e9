import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../admin/apiKeys.js";
import { buildApp } from "../app.js";
import { loadConfig } from "../config.js";
import { buildDeps, closeDeps, type Deps } from "../deps.js";
import { openPostgresStore } from "../store/postgres/postgresStore.js";
import { openRedisCounters, withRedisCounters } from "../store/redis/redisCounters.js";
import { type FaultMode, FaultProxy } from "../testing/faultProxy.js";
import { bearer, CHROME_HEADERS, CHROME_UA } from "../testing/harness.js";
import { postgresSchemaOrSkip } from "../testing/postgres.js";
import { redisPrefixOrSkip } from "../testing/redis.js";

/**
 * Faults between Warden and its servers: a TCP proxy in front of PostgreSQL and one in front of
 * Redis is cut, stalled, slowed down past the deadlines, and reset. Under each: verify answers 200
 * degraded challenge within its deadline (never allow, never 5xx); challenge and feedback answer 503
 * with the spec's codes; /readyz reports the outage and the recovery; feedback acknowledged is stored
 * exactly once after clients retry with their Idempotency-Key; degraded events reach the store.
 */
const SUITE = "faults between Warden and PostgreSQL / Redis";
const prefix = await redisPrefixOrSkip(SUITE, "the fault-injection suite");
const schema = prefix ? await postgresSchemaOrSkip(SUITE, "the fault-injection suite") : undefined;

const DEADLINE_MS = 45;
const BROWSER = { userAgent: CHROME_UA, headers: CHROME_HEADERS };
/**
 * A different residential /24 per verify (none of 81.2.0.0/16 is a hosting network): verify counts
 * velocity in Redis even while PostgreSQL is down, so one network for every attempt of every fault
 * would pass its velocity limit, and the check after recovery would be a challenge for that reason.
 */
const someNetwork = () => `81.2.${randomBytes(1)[0]}.0/24`;

interface Tally {
  fault: string;
  verifies: number;
  byDecision: Record<string, number>;
  allowsDuringFault: number;
  verify5xx: number;
  slowestVerifyMs: number;
  challengeStatuses: string[];
  feedbackAcked: number;
  feedbackStored: number;
}

if (prefix && schema) {
  describe(SUITE, () => {
    let pgProxy: FaultProxy;
    let redisProxy: FaultProxy;
    let deps: Deps;
    let app: FastifyInstance;
    let apiKey: string;
    let eventId: string;
    const tallies: Tally[] = [];

    beforeAll(async () => {
      pgProxy = await new FaultProxy("127.0.0.1", 5432).start();
      redisProxy = await new FaultProxy("127.0.0.1", 6379).start();
      const config = loadConfig({
        WARDEN_LOG_LEVEL: "silent",
        WARDEN_VERIFY_DEADLINE_MS: String(DEADLINE_MS),
        WARDEN_STORE_TIMEOUT_MS: "40",
      });
      const store = withRedisCounters(
        await openPostgresStore({
          url: `postgres://postgres@127.0.0.1:${pgProxy.port}/test`,
          statementTimeoutMs: 40,
          poolSize: 4,
          schema,
        }),
        await openRedisCounters({
          url: `redis://127.0.0.1:${redisProxy.port}`,
          commandTimeoutMs: 40,
          keyPrefix: prefix,
        }),
      );
      deps = await buildDeps(config, store);
      app = await buildApp(deps, { logger: false });
      await app.ready();
      await store.tenants.create({ id: "acme", rawPii: false, logOnly: false, createdAt: Date.now() });
      ({ apiKey } = await issueApiKey(store, {
        tenantId: "acme",
        scopes: ["verify:write", "challenge:write", "feedback:write", "ledger:read"],
        logOnly: false,
        now: Date.now(),
      }));
      const first = await verify();
      expect(first.json).toMatchObject({ decision: "allow", degraded: false });
      eventId = first.json.eventId as string;
    }, 30_000);

    afterAll(async () => {
      console.log(`\nFault injection summary (${DEADLINE_MS} ms verify deadline):`);
      console.table(
        tallies.map((t) => ({
          fault: t.fault,
          verifies: t.verifies,
          decisions: JSON.stringify(t.byDecision),
          allowsDuringFault: t.allowsDuringFault,
          verify5xx: t.verify5xx,
          slowestVerifyMs: t.slowestVerifyMs,
          challenge: t.challengeStatuses.join(" "),
          feedbackAckedStored: `${t.feedbackAcked}/${t.feedbackStored}`,
        })),
      );
      await app?.close();
      if (deps) await closeDeps(deps);
      await pgProxy?.stop();
      await redisProxy?.stop();
    });

    async function post(url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) {
      const started = performance.now();
      const res = await app.inject({
        method: "POST",
        url,
        headers: { ...bearer(apiKey), ...headers },
        payload,
      });
      return {
        status: res.statusCode,
        json: res.json<Record<string, unknown>>(),
        ms: performance.now() - started,
      };
    }
    const verify = () =>
      post("/v1/verify", {
        action: "signup",
        session: `s-${randomBytes(4).toString("hex")}`,
        subject: { ...BROWSER, ipTrunc: someNetwork() },
      });
    const ready = async () => (await app.inject({ method: "GET", url: "/readyz" })).statusCode;

    async function underFault(
      name: string,
      proxy: FaultProxy,
      apply: () => void,
      outage: boolean,
    ): Promise<void> {
      const tally: Tally = {
        fault: name,
        verifies: 0,
        byDecision: {},
        allowsDuringFault: 0,
        verify5xx: 0,
        slowestVerifyMs: 0,
        challengeStatuses: [],
        feedbackAcked: 0,
        feedbackStored: 0,
      };
      tallies.push(tally);
      apply();
      const degradedIds: string[] = [];
      for (let i = 0; i < 20; i++) {
        const v = await verify();
        tally.verifies++;
        if (v.status >= 500) tally.verify5xx++;
        const decision = String(v.json.decision);
        tally.byDecision[decision] = (tally.byDecision[decision] ?? 0) + 1;
        if (outage && decision === "allow") tally.allowsDuringFault++;
        tally.slowestVerifyMs = Math.max(tally.slowestVerifyMs, Math.round(v.ms));
        if (v.json.degraded === true) degradedIds.push(String(v.json.eventId));
      }
      const session = `c-${randomBytes(4).toString("hex")}`;
      const issued = await post("/v1/challenge", { eventId, session });
      tally.challengeStatuses.push(
        issued.status === 200 ? "200" : `${issued.status} ${String(issued.json.code)}`,
      );
      const keys = [1, 2, 3].map((i) => `fb-${name}-${i}-${randomBytes(3).toString("hex")}`);
      const observedAt = new Date().toISOString();
      const feedback = (key: string, i: number) =>
        post(
          "/v1/feedback",
          { eventId, outcome: "credit_burn", value: i + 1, observedAt },
          { "idempotency-key": key },
        );
      const firstTry = await Promise.all(keys.map((k, i) => feedback(k, i)));
      if (outage) expect(await ready()).toBe(503);

      proxy.set("pass");
      const deadline = Date.now() + 10_000;
      while ((await ready()) !== 200) {
        if (Date.now() > deadline) throw new Error(`${name}: /readyz did not recover`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // Clients retry what was not acknowledged, with the same Idempotency-Key (spec, Retry policy).
      for (const [i, key] of keys.entries()) {
        let res = firstTry[i] as Awaited<ReturnType<typeof feedback>>;
        for (let attempt = 0; res.status !== 200 && attempt < 10; attempt++) {
          expect(res.status).toBe(503);
          expect(["feedback_lookup_failed", "feedback_ingest_failed"]).toContain(res.json.code);
          await new Promise((r) => setTimeout(r, 100));
          res = await feedback(key, i);
        }
        expect(res.status).toBe(200);
        tally.feedbackAcked++;
      }
      const stored = (await deps.store.feedback.listForEvent("acme", eventId)).filter(
        (o) => o.observedAt === Date.parse(observedAt),
      );
      tally.feedbackStored = stored.length;
      await deps.pendingEvents.flush();
      const missing: string[] = [];
      for (const id of degradedIds) if (!(await deps.store.events.get("acme", id))) missing.push(id);
      expect(
        `missing ${missing.length}, pending ${deps.pendingEvents.size}, dropped ${deps.pendingEvents.dropped}`,
      ).toBe("missing 0, pending 0, dropped 0");

      expect(tally.verify5xx).toBe(0);
      expect(tally.allowsDuringFault).toBe(0);
      // The deadline runs from arrival; what is left is signing the verdict and the in-process HTTP round trip.
      expect(tally.slowestVerifyMs).toBeLessThan(DEADLINE_MS + 60);
      expect(tally.feedbackStored).toBe(3);
      if (outage) {
        expect(issued.status).toBe(503);
        expect(["challenge_issue_failed", "challenge_unavailable"]).toContain(issued.json.code);
        expect(degradedIds.length).toBe(20);
      }
      const after = await verify();
      expect(after.json).toMatchObject({ decision: "allow", degraded: false });
    }

    const modes: [FaultMode, string][] = [
      ["cut", "cut"],
      ["stall", "stalled"],
      ["slow", "slowed past the deadline"],
    ];
    for (const [mode, what] of modes) {
      it(`PostgreSQL ${what}`, async () => {
        await underFault(`postgres ${mode}`, pgProxy, () => pgProxy.set(mode), true);
      }, 60_000);
      it(`Redis ${what}`, async () => {
        await underFault(`redis ${mode}`, redisProxy, () => redisProxy.set(mode), true);
      }, 60_000);
    }
    it("PostgreSQL and Redis connections reset", async () => {
      await underFault("postgres reset", pgProxy, () => pgProxy.reset(), false);
      await underFault("redis reset", redisProxy, () => redisProxy.reset(), false);
    }, 60_000);
  });
}
