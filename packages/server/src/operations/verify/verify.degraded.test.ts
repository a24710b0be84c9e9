import SQLite from "better-sqlite3";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../../testing/harness.js";
import { DEGRADED_REASON } from "./verify.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const attempt = { action: "signup", subject: { userAgent: "curl/8.5.0" }, session: "s-9" };

async function setup(
  failing: Set<string>,
  extra: { hangUntil?: Promise<unknown>; error?: () => Error; env?: Record<string, string> } = {},
) {
  t = await makeTestApp({
    env: extra.env ?? {},
    wrapStore: (s) =>
      faultyStore(s, {
        failing,
        ...(extra.hangUntil === undefined ? {} : { hangUntil: extra.hangUntil }),
        error: extra.error ?? (() => new StoreUnavailableError("injected outage")),
      }),
  });
  await t.tenant("acme");
  const { apiKey } = await t.key("acme");
  const post = (payload: unknown = attempt) =>
    (t as TestApp).app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: JSON.stringify(payload),
    });
  return { apiKey, post };
}

function expectDegraded(res: { statusCode: number; json(): Record<string, unknown> }) {
  expect(res.statusCode).toBe(200);
  const body = res.json();
  expect(body).toMatchObject({ decision: "challenge", degraded: true, actorType: "unknown", confidence: 0 });
  expect(body.reasons).toEqual([DEGRADED_REASON]);
  expect(body.eventId).toMatch(/^evt_/);
  expect(typeof body.verdictToken).toBe("string");
  expect(body).not.toHaveProperty("challengeCleared");
  return body;
}

describe("degradation: any fault answers 200 challenge with degraded true, never allow and never 5xx", () => {
  it.each(["counters.hit", "events.record", "idempotency.find"])("a store outage in %s", async (area) => {
    const { post } = await setup(new Set([area]));
    const res = await post({ ...attempt, subject: { ipTrunc: "192.0.2.0/24" } });
    // idempotency.find is only called with a key
    if (area === "idempotency.find") {
      const { apiKey } = await (t as TestApp).key("acme");
      const withKey = await (t as TestApp).app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: { ...bearer(apiKey), "idempotency-key": "k1" },
        payload: attempt,
      });
      expectDegraded(withKey);
      return;
    }
    expectDegraded(res);
  });

  it("a store call that hangs past the deadline is answered at the deadline, without waiting for it", async () => {
    let release = () => {};
    const hang = new Promise<void>((resolve) => {
      release = resolve;
    });
    let hanging = true;
    void hang.then(() => {
      hanging = false;
    });
    const { post } = await setup(new Set(["events.record"]), {
      hangUntil: hang,
      env: { WARDEN_VERIFY_DEADLINE_MS: "30" },
    });
    try {
      // The write never ends until it is released below: the answer comes while it still hangs.
      expectDegraded(await post());
      expect(hanging).toBe(true);
    } finally {
      release();
    }
  });

  it("an unexpected exception (a bug, not an outage) is degraded too", async () => {
    const { post } = await setup(new Set(["counters.hit"]), {
      error: () => new TypeError("cannot read properties of undefined"),
    });
    expectDegraded(await post());
  });

  it("a key seen before authenticates from memory; a store outage degrades, signed for the tenant last seen with that key", async () => {
    const failing = new Set<string>();
    const { post } = await setup(failing);
    expect((await post()).json().degraded).toBe(false);
    failing.add("apiKeys.findByHash");
    expect((await post()).json().degraded).toBe(false);
    failing.add("counters");
    failing.add("events");
    const body = expectDegraded(await post());
    const jwks = createRemoteJWKSet(
      new URL(`${await (t as TestApp).app.listen({ port: 0, host: "127.0.0.1" })}/.well-known/jwks.json`),
    );
    const { payload } = await jwtVerify(body.verdictToken as string, jwks);
    expect(payload).toMatchObject({ tid: "acme", sub: "s-9", decision: "challenge", degraded: true });
  });

  it("authentication that cannot reach the store, for a key never seen, still degrades instead of failing", async () => {
    const { post } = await setup(new Set(["apiKeys.findByHash"]));
    expectDegraded(await post());
  });

  it("a malformed key is still 401 during an outage, and bad input still 400", async () => {
    const { post } = await setup(new Set(["apiKeys", "counters", "events"]));
    const res = await (t as TestApp).app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: { authorization: "Bearer nope", "content-type": "application/json" },
      payload: attempt,
    });
    expect(res.statusCode).toBe(401);
    expect((await post({ subject: {} })).statusCode).toBe(400);
  });

  it("is a challenge even under log_only", async () => {
    const { post } = await setup(new Set(["counters.hit"]));
    const body = expectDegraded(await post({ ...attempt, context: { logOnly: true } }));
    expect(body.enforcementMode).toBe("log_only");
  });

  it("is stored under the idempotency key with its one event: a retry replays it (one event per key)", async () => {
    const failing = new Set(["counters.hit"]);
    t = await makeTestApp({
      wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("down") }),
    });
    await t.tenant("acme");
    const { apiKey } = await t.key("acme");
    const send = (key = "retry-me", payload: Record<string, unknown> = attempt) =>
      (t as TestApp).app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: { ...bearer(apiKey), "idempotency-key": key },
        payload,
      });
    const first = (await send()).json();
    expect(first.degraded).toBe(true);
    // Degraded again while the store is still failing: the same event.
    expect((await send()).json().eventId).toBe(first.eventId);
    await t.deps.pendingEvents.flush();
    failing.clear();
    const healed = await send();
    expect(healed.headers["idempotent-replayed"]).toBe("true");
    expect(healed.json()).toEqual(first);
    expect(await t.store.events.get("acme", first.eventId)).toMatchObject({
      id: first.eventId,
      degraded: true,
    });
    // The same key with another payload conflicts; another key decides afresh.
    expect((await send("retry-me", { ...attempt, action: "other" })).statusCode).toBe(409);
    expect((await send("fresh-key")).json()).toMatchObject({ degraded: false });
  });
});

describe("degradation on a real, locked database under a running server", () => {
  it("answers degraded while another process holds the write lock, then recovers", async () => {
    // The lock degrades through SQLite's busy timeout (15 ms), not through verify's deadline: the
    // deadline stays the logic tests' own, so a busy machine cannot degrade the answers before and after.
    t = await makeTestApp({ env: { WARDEN_STORE_TIMEOUT_MS: "15" } });
    await t.tenant("acme");
    const { apiKey } = await t.key("acme");
    const url = await t.app.listen({ port: 0, host: "127.0.0.1" });
    const send = async () => {
      const res = await fetch(`${url}/v1/verify`, {
        method: "POST",
        headers: bearer(apiKey),
        body: JSON.stringify(attempt),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect((await send()).body.degraded).toBe(false);

    const locker = new SQLite(t.dbFile);
    locker.exec("BEGIN EXCLUSIVE");
    try {
      const during = await Promise.all([send(), send(), send()]);
      for (const r of during) {
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ decision: "challenge", degraded: true });
      }
    } finally {
      locker.exec("ROLLBACK");
      locker.close();
    }
    const after = await send();
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ degraded: false, decision: "challenge", actorType: "agent_abusive" });
  });
});
