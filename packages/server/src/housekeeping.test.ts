import { afterEach, describe, expect, it } from "vitest";
import { housekeep } from "./housekeeping.js";
import { bearer, expectError, makeTestApp, type TestApp } from "./testing/harness.js";

const DAY = 86_400_000;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** An app whose clock the test moves, with one tenant and a key with every scope. */
async function appAt(start: number, env: Record<string, string>) {
  let now = start;
  t = await makeTestApp({ env, clock: () => now });
  await t.tenant("acme");
  const { apiKey } = await t.key("acme");
  const app = t.app;
  return {
    deps: t.deps,
    advance: (ms: number) => {
      now += ms;
    },
    verify: async (session: string) => {
      const res = await app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(apiKey),
        payload: { action: "signup", session, subject: { emailSha256: "a".repeat(64) } },
      });
      expect(res.statusCode).toBe(200);
      return res.json().eventId as string;
    },
    feedback: (eventId: string, idempotencyKey?: string) =>
      app.inject({
        method: "POST",
        url: "/v1/feedback",
        headers: { ...bearer(apiKey), ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) },
        payload: { eventId, outcome: "chargeback", value: 25 },
      }),
    challenge: (eventId: string, session: string) =>
      app.inject({
        method: "POST",
        url: "/v1/challenge",
        headers: bearer(apiKey),
        payload: { eventId, session },
      }),
  };
}

describe("retention (WARDEN_RETENTION_DAYS)", () => {
  it("an event past the retention goes with its feedback; feedback for it then gets 404 unknown_event_id, as for an event never recorded, a retry under its key included", async () => {
    const w = await appAt(Date.parse("2027-01-01T00:00:00Z"), {
      WARDEN_RETENTION_DAYS: "30",
      WARDEN_IDEMPOTENCY_TTL_HOURS: "720",
    });
    const old = await w.verify("s-old");
    // A chargeback reported 25 days later, under a key remembered for 30 days.
    w.advance(25 * DAY);
    expect((await w.feedback(old, "fb-late")).statusCode).toBe(200);
    w.advance(6 * DAY);
    const recent = await w.verify("s-new");

    const removed = await housekeep(w.deps);
    expect(removed).toMatchObject({ events: 1, observations: 1, idempotentAnswers: 1 });

    const never = await w.feedback("evt_never_recorded");
    expectError(never, 404, "unknown_event_id");
    for (const res of [await w.feedback(old), await w.feedback(old, "fb-late")]) {
      expectError(res, 404, "unknown_event_id");
      expect(res.json()).toEqual(never.json());
    }
    expectError(await w.challenge(old, "s-old"), 404, "unknown_event_id");
    expect((await w.feedback(recent)).statusCode).toBe(200);
    // The next pass finds nothing more to remove.
    expect(await housekeep(w.deps)).toMatchObject({ events: 0, observations: 0 });
  });

  it("keeps an event younger than the retention, with its feedback", async () => {
    const w = await appAt(Date.parse("2027-01-01T00:00:00Z"), { WARDEN_RETENTION_DAYS: "30" });
    const eventId = await w.verify("s-young");
    expect((await w.feedback(eventId)).statusCode).toBe(200);
    w.advance(29 * DAY);
    expect(await housekeep(w.deps)).toMatchObject({ events: 0 });
    expect((await w.deps.store.feedback.listForEvent("acme", eventId)).length).toBe(1);
  });

  it("WARDEN_RETENTION_DAYS=forever keeps every event", async () => {
    const w = await appAt(Date.parse("2020-01-01T00:00:00Z"), { WARDEN_RETENTION_DAYS: "forever" });
    const eventId = await w.verify("s-forever");
    w.advance(3650 * DAY);
    expect(await housekeep(w.deps)).toBeUndefined();
    expect((await w.feedback(eventId)).statusCode).toBe(200);
  });
});
