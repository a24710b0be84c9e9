import { afterEach, describe, expect, it } from "vitest";
import { createMetrics } from "../../http/metrics.js";
import { StoreRejectedError, StoreUnavailableError } from "../../store/interfaces.js";
import { bearer, faultyStore, makeTestApp, type TestApp, testEvent } from "../../testing/harness.js";
import { PendingEvents } from "./pendingEvents.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("events of degraded verdicts", () => {
  it("an event the store refuses for what it holds is dropped, counted and reported; the events behind it are written", async () => {
    t = await makeTestApp();
    const written: string[] = [];
    const reports: string[] = [];
    const refusing = {
      ...t.store,
      events: {
        ...t.store.events,
        record: async (...args: Parameters<TestApp["store"]["events"]["record"]>) => {
          if (args[0].id === "evt_refused")
            throw new StoreRejectedError("events.record: invalid byte sequence");
          written.push(args[0].id);
          return t?.store.events.record(...args) ?? { kind: "recorded" as const };
        },
      },
    };
    const queue = new PendingEvents(refusing, { capacity: 100, retryMs: 10_000 });
    queue.report = (_err, what) => reports.push(what);
    queue.add(testEvent("evt_refused"));
    queue.add(testEvent("evt_after_1"));
    queue.add(testEvent("evt_after_2"));
    await queue.flush();
    expect(queue.size).toBe(0);
    expect(written).toEqual(["evt_after_1", "evt_after_2"]);
    expect(queue).toMatchObject({ rejected: 1, written: 2, dropped: 0 });
    expect(reports).toEqual(["degraded event evt_refused dropped: the store refused it"]);
    queue.stop();
  });

  it("an event whose subject was erased meanwhile is not written, and is counted on /metrics", async () => {
    t = await makeTestApp();
    const erasing = {
      ...t.store,
      events: {
        ...t.store.events,
        record: async (...args: Parameters<TestApp["store"]["events"]["record"]>) =>
          args[0].id === "evt_erased"
            ? { kind: "erased" as const }
            : ((await t?.store.events.record(...args)) ?? { kind: "recorded" as const }),
      },
    };
    const queue = new PendingEvents(erasing, { capacity: 100, retryMs: 10_000 });
    queue.add(testEvent("evt_erased"));
    queue.add(testEvent("evt_kept"));
    await queue.flush();
    expect(queue).toMatchObject({ erased: 1, written: 1, rejected: 0, dropped: 0, size: 0 });
    const metrics = createMetrics(queue);
    expect(await metrics.registry.getSingleMetricAsString("warden_degraded_events_erased")).toMatch(
      /^warden_degraded_events_erased 1$/m,
    );
    queue.stop();
  });

  it("once the store has failed, new degraded events wait for the retry instead of trying the store each", async () => {
    t = await makeTestApp();
    const tried: string[] = [];
    let down = true;
    const failing = {
      ...t.store,
      events: {
        ...t.store.events,
        record: async (...args: Parameters<TestApp["store"]["events"]["record"]>) => {
          tried.push(args[0].id);
          if (down) throw new StoreUnavailableError("events.record: timeout");
          return t?.store.events.record(...args) ?? { kind: "recorded" as const };
        },
      },
    };
    const queue = new PendingEvents(failing, { capacity: 100, retryMs: 60_000 });
    queue.add(testEvent("evt_first"));
    await queue.flush();
    for (let i = 0; i < 5; i++) queue.add(testEvent(`evt_more_${i}`));
    await new Promise((r) => setTimeout(r, 20));
    // One attempt for the first; the five behind it wait in the queue for the scheduled retry.
    expect(tried).toEqual(["evt_first"]);
    expect(queue.size).toBe(6);
    down = false;
    queue.stop();
    await queue.drain(5_000);
    expect(queue).toMatchObject({ size: 0, written: 6 });
  });

  it("a keyed degraded event: one per key with its copies; written without the key when a scored answer holds it", async () => {
    t = await makeTestApp();
    const claim = (eventId: string) => ({
      tenantId: "t1",
      operation: "verify",
      key: "k-1",
      response: {
        fingerprint: "fp",
        statusCode: 200,
        body: { eventId, degraded: eventId === "evt_degraded" },
      },
      expiresAt: Date.now() + 60_000,
    });
    const queue = new PendingEvents(t.store, { capacity: 100, retryMs: 10_000 });
    // Two processes' copies of one degraded answer: the same id, one event, one answer under the key.
    queue.add(testEvent("evt_degraded", { degraded: true }), claim("evt_degraded"));
    queue.add(testEvent("evt_degraded", { degraded: true }), claim("evt_degraded"));
    await queue.flush();
    expect(queue).toMatchObject({ written: 1, superseded: 0 });
    // A scored answer committed under another key first; then this key's degraded copy arrives.
    await t.store.events.record(testEvent("evt_scored"), { ...claim("evt_scored"), key: "k-2" });
    queue.add(testEvent("evt_late", { degraded: true }), { ...claim("evt_late"), key: "k-2" });
    await queue.flush();
    expect(queue).toMatchObject({ written: 2, superseded: 1 });
    // Its caller's eventId works; the key keeps the scored answer.
    expect(await t.store.events.get("t1", "evt_late")).toMatchObject({ degraded: true });
    const held = await t.store.idempotency.find({ tenantId: "t1", operation: "verify", key: "k-2" }, 0);
    expect(held?.body).toMatchObject({ eventId: "evt_scored" });
    queue.stop();
  });

  it("wait while the store is down and are written when it returns: the eventId then works for challenge and feedback", async () => {
    const failing = new Set<string>();
    t = await makeTestApp({
      wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("down") }),
    });
    await t.tenant("acme");
    const { apiKey } = await t.key("acme");
    const post = (url: string, payload: Record<string, unknown>) =>
      (t as TestApp).app.inject({ method: "POST", url, headers: bearer(apiKey), payload });

    failing.add("events");
    failing.add("counters");
    const degraded = await post("/v1/verify", { action: "signup", session: "s-1", subject: {} });
    expect(degraded.json()).toMatchObject({ decision: "challenge", degraded: true });
    const eventId = degraded.json<{ eventId: string }>().eventId;
    expect(t.deps.pendingEvents.size).toBe(1);
    // While the store is down the event cannot be found, and the metrics say one is waiting.
    expect((await t.app.inject({ method: "GET", url: "/metrics" })).body).toMatch(
      /warden_degraded_events_pending 1/,
    );

    failing.clear();
    await t.deps.pendingEvents.flush();
    expect(t.deps.pendingEvents.size).toBe(0);
    const event = await t.store.events.get("acme", eventId);
    expect(event).toMatchObject({ decision: "challenge", degraded: true, session: "s-1" });
    expect((await post("/v1/challenge", { eventId, session: "s-1" })).statusCode).toBe(200);
    expect((await post("/v1/feedback", { eventId, outcome: "converted" })).json()).toEqual({
      ok: true,
      eventId,
    });
  });

  it("are bounded: past the capacity the oldest are dropped and counted; written in order when the store returns", async () => {
    t = await makeTestApp();
    const failing = new Set<string>(["events"]);
    const store = faultyStore(t.store, { failing });
    const pending = new PendingEvents(store, { capacity: 3, retryMs: 10_000 });
    for (const id of ["evt_1", "evt_2", "evt_3", "evt_4", "evt_5"]) pending.add(testEvent(id));
    await pending.flush();
    expect(pending.size).toBe(3);
    expect(pending.dropped).toBe(2);
    failing.clear();
    expect(await pending.drain(1000)).toBe(0);
    expect(pending.written).toBe(3);
    expect(await t.store.events.get("t1", "evt_1")).toBeUndefined();
    for (const id of ["evt_3", "evt_4", "evt_5"]) expect(await t.store.events.get("t1", id)).toBeDefined();
  });

  it("a flush of an empty queue does not stop later flushes", async () => {
    t = await makeTestApp();
    const pending = new PendingEvents(t.store, { capacity: 10, retryMs: 10_000 });
    await pending.flush();
    pending.add(testEvent("evt_later"));
    await pending.flush();
    expect(pending.size).toBe(0);
    expect(await t.store.events.get("t1", "evt_later")).toBeDefined();
  });

  it("drain gives up after its timeout and reports what is left", async () => {
    t = await makeTestApp();
    const pending = new PendingEvents(faultyStore(t.store, { failing: new Set(["events"]) }), {
      capacity: 10,
      retryMs: 50,
    });
    pending.add(testEvent("evt_x"));
    // The store never takes it: drain ends by giving up, with the event still waiting.
    expect(await pending.drain(300)).toBe(1);
    expect(pending.size).toBe(1);
  });
});
