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

describe("retention hours (WARDEN_RETENTION_HOURS)", () => {
  it("outside the window a pass removes no event (expired counters and keys still go); inside it, the events past retention go", async () => {
    const w = await appAt(Date.parse("2027-01-01T12:00:00Z"), {
      WARDEN_RETENTION_DAYS: "30",
      WARDEN_RETENTION_HOURS: "2-4",
    });
    const old = await w.verify("s-old");
    w.advance(31 * DAY);
    // 2027-02-01T12:00Z: outside 02:00–04:00 UTC.
    let outside = 0;
    expect(await housekeep(w.deps, undefined, { outsideHours: () => outside++ })).toMatchObject({
      events: 0,
    });
    expect(outside).toBe(1);
    expect((await w.feedback(old)).statusCode).toBe(200);
    // 2027-02-02T03:00Z: inside.
    w.advance(15 * 3_600_000);
    expect(await housekeep(w.deps, undefined, { outsideHours: () => outside++ })).toMatchObject({
      events: 1,
      observations: 1,
    });
    expect(outside).toBe(1);
    expectError(await w.feedback(old), 404, "unknown_event_id");
  });
});

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
    expect(await housekeep(w.deps)).toMatchObject({ events: 0 });
    expect((await w.feedback(eventId)).statusCode).toBe(200);
  });
});

describe("a tenant's own retention (policy retentionDays)", () => {
  /** The app of appAt with a second tenant, globex, whose policy is `document`. */
  async function twoTenants(env: Record<string, string>, document: unknown) {
    const start = Date.parse("2027-01-01T00:00:00Z");
    const w = await appAt(start, env);
    const app = t as TestApp;
    await app.tenant("globex");
    const { apiKey } = await app.key("globex");
    await app.store.policies.put("globex", JSON.stringify(document), start);
    const verifyGlobex = async (session: string) => {
      const res = await app.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(apiKey),
        payload: { action: "signup", session, subject: {} },
      });
      expect(res.statusCode).toBe(200);
      return res.json().eventId as string;
    };
    const kept = async (tenantId: string, eventId: string) =>
      (await app.store.events.get(tenantId, eventId)) !== undefined;
    return { ...w, verifyGlobex, kept };
  }

  it("a tenant with retentionDays 30 loses its 31-day-old events; the other tenant keeps them under WARDEN_RETENTION_DAYS", async () => {
    const w = await twoTenants({ WARDEN_RETENTION_DAYS: "180" }, { retentionDays: 30 });
    const acme = await w.verify("s-acme");
    const globex = await w.verifyGlobex("s-globex");
    w.advance(31 * DAY);
    expect(await housekeep(w.deps)).toMatchObject({ events: 1 });
    expect(await w.kept("globex", globex)).toBe(false);
    expect(await w.kept("acme", acme)).toBe(true);
  });

  it("retentionDays \"forever\" keeps a tenant's events past WARDEN_RETENTION_DAYS; a tenant's 90 days remove them under WARDEN_RETENTION_DAYS=forever", async () => {
    const forever = await twoTenants({ WARDEN_RETENTION_DAYS: "30" }, { retentionDays: "forever" });
    const acme = await forever.verify("s-acme");
    const globex = await forever.verifyGlobex("s-globex");
    forever.advance(400 * DAY);
    expect(await housekeep(forever.deps)).toMatchObject({ events: 1 });
    expect(await forever.kept("acme", acme)).toBe(false);
    expect(await forever.kept("globex", globex)).toBe(true);
    await t?.close();

    const days90 = await twoTenants({ WARDEN_RETENTION_DAYS: "forever" }, { retentionDays: 90 });
    const kept = await days90.verify("s-acme");
    const gone = await days90.verifyGlobex("s-globex");
    days90.advance(91 * DAY);
    expect(await housekeep(days90.deps)).toMatchObject({ events: 1 });
    expect(await days90.kept("globex", gone)).toBe(false);
    expect(await days90.kept("acme", kept)).toBe(true);
  });

  it("a tenant whose policy cannot be read is passed over, named; the other tenants' retention goes on", async () => {
    const w = await twoTenants({ WARDEN_RETENTION_DAYS: "30" }, { retentionDays: 30 });
    const acme = await w.verify("s-acme");
    const globex = await w.verifyGlobex("s-globex");
    w.advance(31 * DAY);
    const current = w.deps.store.policies.current;
    w.deps.store.policies.current = (tenantId) =>
      tenantId === "acme" ? Promise.reject(new Error("the test's read fails")) : current(tenantId);
    const passedOver: string[] = [];
    try {
      expect(await housekeep(w.deps, undefined, { skipped: (id) => passedOver.push(id) })).toMatchObject({
        events: 1,
      });
    } finally {
      w.deps.store.policies.current = current;
    }
    expect(passedOver).toEqual(["acme"]);
    expect(await w.kept("acme", acme)).toBe(true);
    expect(await w.kept("globex", globex)).toBe(false);
    // The next pass, with the policy readable again, removes what was passed over.
    expect(await housekeep(w.deps)).toMatchObject({ events: 1 });
    expect(await w.kept("acme", acme)).toBe(false);
  });

  it("a tenant's retentionDays shorter than WARDEN_IDEMPOTENCY_TTL_HOURS is raised to it: a retry under a remembered key finds its event", async () => {
    const w = await twoTenants(
      { WARDEN_RETENTION_DAYS: "180", WARDEN_IDEMPOTENCY_TTL_HOURS: "480" },
      { retentionDays: 7 },
    );
    const globex = await w.verifyGlobex("s-globex");
    w.advance(19 * DAY);
    expect(await housekeep(w.deps)).toMatchObject({ events: 0 });
    expect(await w.kept("globex", globex)).toBe(true);
    w.advance(2 * DAY);
    expect(await housekeep(w.deps)).toMatchObject({ events: 1 });
    expect(await w.kept("globex", globex)).toBe(false);
  });
});
