import { describe, expect, it } from "vitest";
import { issueApiKey } from "../../admin/apiKeys.js";
import { buildApp } from "../../app.js";
import { loadConfig } from "../../config.js";
import { buildDeps, closeDeps } from "../../deps.js";
import { ALL_SCOPES } from "../../domain.js";
import { solvePow } from "../../operations/challenge/methods/proofOfWork/proofOfWork.js";
import { bearer, LOGIC_TEST_DEADLINE_MS } from "../../testing/harness.js";
import { postgresSchemaOrSkip, TEST_POSTGRES_URL } from "../../testing/postgres.js";
import { openPostgresStore } from "./postgresStore.js";

const url = TEST_POSTGRES_URL;
const schema = await postgresSchemaOrSkip("the service on PostgreSQL", "the service-on-PostgreSQL test");
if (schema) {
  describe("the service on PostgreSQL", () => {
    it("verifies, records feedback, issues and completes a challenge, and honors the clear once", async () => {
      const config = loadConfig({
        WARDEN_DATABASE_URL: url,
        WARDEN_LOG_LEVEL: "silent",
        WARDEN_STORE_TIMEOUT_MS: "2000",
      });
      const store = await openPostgresStore({
        url,
        statementTimeoutMs: 2000,
        poolSize: 4,
        poolMin: 2,
        schema,
      });
      // This suite shares the machine with other test files: past verify's production deadline a busy
      // moment would rightly answer degraded, and this is a test of the flow, not of the deadline.
      const deps = await buildDeps({ ...config, verifyDeadlineMs: LOGIC_TEST_DEADLINE_MS }, store);
      const app = await buildApp(deps, { logger: false });
      try {
        await store.tenants.create({ id: "acme", rawPii: false, logOnly: false, createdAt: Date.now() });
        const { apiKey } = await issueApiKey(store, {
          tenantId: "acme",
          scopes: [...ALL_SCOPES],
          logOnly: false,
          now: Date.now(),
        });
        const post = async (route: string, payload: unknown, extra: Record<string, string> = {}) => {
          const res = await app.inject({
            method: "POST",
            url: route,
            headers: { ...bearer(apiKey), ...extra },
            payload: JSON.stringify(payload),
          });
          return { status: res.statusCode, body: res.json() };
        };
        const attempt = {
          action: "signup",
          session: "pg-1",
          // No user agent: challenged without automation evidence, at the default tier's difficulty.
          subject: { ipTrunc: "203.0.113.0/24" },
        };
        // As `warden serve` does before listening: every rehearsed verify answers on PostgreSQL.
        expect(await app.warmUp()).toMatchObject({ rehearsed: 32, failed: 0 });
        const v = await post("/v1/verify", attempt, { "idempotency-key": "pg-k" });
        expect(v.body).toMatchObject({ decision: "challenge", degraded: false });
        expect((await post("/v1/verify", attempt, { "idempotency-key": "pg-k" })).body.eventId).toBe(
          v.body.eventId,
        );

        expect(
          (await post("/v1/feedback", { eventId: v.body.eventId, outcome: "converted", value: 100 })).body,
        ).toEqual({
          ok: true,
          eventId: v.body.eventId,
        });
        await post("/v1/feedback", { eventId: v.body.eventId, outcome: "abuse_confirmed" });
        const view = await app.inject({
          method: "GET",
          url: `/v1/events/${v.body.eventId}`,
          headers: bearer(apiKey),
        });
        expect(view.json().observations.map((o: { status: string }) => o.status)).toEqual([
          "effective",
          "quarantined",
        ]);

        const c = (await post("/v1/challenge", { eventId: v.body.eventId, session: "pg-1" })).body;
        const { nonce } = solvePow(c.instructions.seed, c.instructions.difficulty);
        expect(
          (await post("/v1/challenge", { challengeId: c.challengeId, session: "pg-1", proof: { nonce } }))
            .status,
        ).toBe(200);
        const cleared = await post("/v1/verify", { ...attempt, context: { challengeId: c.challengeId } });
        expect(cleared.body).toMatchObject({ decision: "allow", challengeCleared: true });
        const again = await post("/v1/verify", { ...attempt, context: { challengeId: c.challengeId } });
        expect(again.body).not.toHaveProperty("challengeCleared");
      } finally {
        await app.close();
        await closeDeps(deps);
      }
    });
  });
}
