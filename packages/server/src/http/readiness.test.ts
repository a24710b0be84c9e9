import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../testing/harness.js";
import { UNHEALTHY_VERIFY } from "./recentVerdicts.js";

/**
 * GET /readyz/store says whether the store can take writes, not merely whether it answers a read;
 * GET /readyz stays 200 meanwhile (the process still answers, with the degraded challenge), and says
 * the store is down.
 */
let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

const ready = async () => {
  const res = await t.app.inject({ method: "GET", url: "/readyz/store" });
  return { status: res.statusCode, body: res.json() };
};
const traffic = async () => {
  const res = await t.app.inject({ method: "GET", url: "/readyz" });
  return { status: res.statusCode, body: res.json() };
};

describe("readiness", () => {
  it("is 503 while another connection holds SQLite's write lock, and 200 again once it is released", async () => {
    expect(await ready()).toMatchObject({ status: 200, body: { ok: true, store: "up" } });
    const other = new SQLite(t.dbFile);
    try {
      other.exec("BEGIN IMMEDIATE");
      // Reads still work while the lock is held: a read probe would have said 200 here.
      expect(await t.store.tenants.get("nobody")).toBeUndefined();
      expect(await ready()).toMatchObject({ status: 503, body: { ok: false, store: "down" } });
      // Still ready for traffic: a balancer keeps sending verifies, which answer degraded, not 503.
      expect(await traffic()).toMatchObject({ status: 200, body: { ok: true, store: "down" } });
      other.exec("ROLLBACK");
      expect(await ready()).toMatchObject({ status: 200, body: { ok: true, store: "up" } });
    } finally {
      other.close();
    }
  });
});

describe("readiness says what verify answers", () => {
  let f: TestApp;
  const failing = new Set<string>();
  let apiKey: string;
  beforeAll(async () => {
    f = await makeTestApp({ wrapStore: (s) => faultyStore(s, { failing }) });
    await f.tenant("ready");
    apiKey = (await f.key("ready")).apiKey;
  });
  afterAll(() => f.close());

  const verifies = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await f.app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: bearer(apiKey),
        payload: { action: "signup", session: `r-${i}`, subject: { ipTrunc: "203.0.113.0/24" } },
      });
      expect(res.statusCode).toBe(200);
    }
  };
  const probe = async (url: string) => {
    const res = await f.app.inject({ method: "GET", url });
    return { status: res.statusCode, body: res.json() };
  };

  it("with the store taking the probe's write but verify unable to write its events, /readyz/store is 503 verify degraded, and /readyz stays 200", async () => {
    await verifies(5);
    expect(await probe("/readyz/store")).toMatchObject({
      status: 200,
      body: { store: "up", verify: "idle" },
    });
    failing.add("events");
    await verifies(UNHEALTHY_VERIFY.minAnswers);
    expect(await probe("/readyz/store")).toMatchObject({
      status: 503,
      body: { ok: false, store: "up", verify: "degraded", answers: 25, degraded: 20 },
    });
    expect(await probe("/readyz")).toMatchObject({
      status: 200,
      body: { ok: true, store: "up", verify: "degraded" },
    });
    const metrics = await f.app.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toMatch(/^warden_verify_degraded_ratio 0\.8$/m);
    failing.delete("events");
    await verifies(30);
    expect(await probe("/readyz/store")).toMatchObject({
      status: 200,
      body: { store: "up", verify: "scoring" },
    });
  });
});
