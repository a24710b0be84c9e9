import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventStore, Store } from "../../store/interfaces.js";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";
import { postgresSchemaOrSkip, sqliteAndPostgres } from "../../testing/postgres.js";
import type { Verdict } from "./schema.js";

/**
 * Idempotency is exact under concurrency, on every store: one key → one event, and no answer goes out
 * while a write that contradicts it can still commit (after its caller got the degraded answer,
 * only that degraded answer is committed under the key).
 */

const pgSchema = await postgresSchemaOrSkip(
  "idempotency under concurrency on PostgreSQL",
  "the PostgreSQL half of the idempotency concurrency test",
);

/** events.record runs `before` first and `after` once the store has answered, around the real call. */
const slowRecord = { before: 0, after: 0 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function withSlowRecord(store: Store): Store {
  const events: EventStore = {
    record: async (...args) => {
      if (slowRecord.before) await sleep(slowRecord.before);
      const outcome = await store.events.record(...args);
      if (slowRecord.after) await sleep(slowRecord.after);
      return outcome;
    },
    get: (t, id) => store.events.get(t, id),
  };
  return { ...store, events };
}

const stores = sqliteAndPostgres(pgSchema);

describe.each(stores)("idempotency under concurrency on %s", (_name, open) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    const store = open ? await open() : undefined;
    t = await makeTestApp({
      env: { WARDEN_RATE_LIMIT_MAX: "1000000", WARDEN_VERIFY_DEADLINE_MS: "45" },
      wrapStore: withSlowRecord,
      ...(store ? { store } : {}),
    });
    await t.tenant("acme");
    key = (await t.key("acme")).apiKey;
  });
  afterAll(() => t.close());

  const verify = (idempotencyKey: string, session = "s-1") =>
    t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: { ...bearer(key), "idempotency-key": idempotencyKey },
      payload: { action: "signup", session, subject: { userAgent: "curl/8.5.0", ipTrunc: "203.0.113.0/24" } },
    });

  /**
   * Bursts until one meets the verify deadline (at most 8): a burst whose answers include a degraded
   * one (the machine or the database stalled past the 45 ms deadline, e.g. the checkpoint PostgreSQL
   * runs when another suite drops its database) must still have answered only challenges; then the
   * test waits until single verifies meet the deadline again and repeats the burst with a fresh key.
   */
  async function cleanBurst(send: (key: string) => ReturnType<typeof verify>[]) {
    for (let round = 0; round < 8; round++) {
      const key = `k-${round}-${Math.random().toString(36).slice(2)}`;
      const answers = await Promise.all(send(key));
      const verdicts = answers.filter((a) => a.statusCode === 200).map((a) => a.json<Verdict>());
      if (verdicts.every((v) => !v.degraded)) return { key, answers };
      expect(verdicts.filter((v) => v.degraded).every((v) => v.decision === "challenge")).toBe(true);
      const quietBy = Date.now() + 10_000;
      while (Date.now() < quietBy) {
        const probe = await verify(`quiet-${Math.random().toString(36).slice(2)}`);
        if (!probe.json<Verdict>().degraded) break;
        await sleep(200);
      }
    }
    throw new Error("8 bursts in a row missed the verify deadline");
  }

  it("50 concurrent verifies with one key record one event: one answer, 49 replays, none degraded", async () => {
    for (let round = 0; round < 3; round++) {
      const { answers } = await cleanBurst((k) => Array.from({ length: 50 }, () => verify(k)));
      const verdicts = answers.map((a) => a.json<Verdict>());
      expect(answers.every((a) => a.statusCode === 200)).toBe(true);
      expect(verdicts.filter((v) => v.degraded)).toHaveLength(0);
      expect(new Set(verdicts.map((v) => v.eventId)).size).toBe(1);
      expect(answers.filter((a) => a.headers["idempotent-replayed"] === "true")).toHaveLength(49);
      expect(await t.store.events.get("acme", (verdicts[0] as Verdict).eventId)).toBeDefined();
    }
  });

  it("50 concurrent verifies with one key and two payloads: one event, the other payload conflicts", async () => {
    const { answers } = await cleanBurst((k) =>
      Array.from({ length: 50 }, (_, i) => verify(k, i % 2 === 0 ? "s-even" : "s-odd")),
    );
    const ok = answers.filter((a) => a.statusCode === 200);
    const conflicts = answers.filter((a) => a.statusCode === 409);
    expect(ok.length + conflicts.length).toBe(50);
    expect(new Set(ok.map((a) => a.json<Verdict>().eventId)).size).toBe(1);
    expect(conflicts.every((a) => a.json<{ code: string }>().code === "idempotency_conflict")).toBe(true);
  });

  it("a write abandoned at the deadline commits nothing under the key but the degraded answer the caller got", async () => {
    slowRecord.before = 80;
    const first = await verify("k-late").finally(() => {
      slowRecord.before = 0;
    });
    const degraded = first.json<Verdict>();
    expect(degraded).toMatchObject({ decision: "challenge", degraded: true });
    await t.deps.pendingEvents.flush();
    const stored = await t.store.idempotency.find(
      { tenantId: "acme", operation: "verify", key: "k-late" },
      0,
    );
    expect(stored?.body).toEqual(degraded);
    // The retry replays the answer the first caller saw, and its one event exists.
    const retry = await verify("k-late");
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(retry.json<Verdict>()).toEqual(degraded);
    expect(await t.store.events.get("acme", degraded.eventId)).toMatchObject({ degraded: true });
  });

  it("a write that reached its commit is waited for past the deadline: the answer is the recorded one", async () => {
    slowRecord.after = 80;
    const answer = await verify("k-committing").finally(() => {
      slowRecord.after = 0;
    });
    const verdict = answer.json<Verdict>();
    expect(verdict.degraded).toBe(false);
    const stored = await t.store.idempotency.find(
      { tenantId: "acme", operation: "verify", key: "k-committing" },
      0,
    );
    expect((stored?.body as Verdict | undefined)?.eventId).toBe(verdict.eventId);
  });
});
