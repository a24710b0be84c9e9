import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../testing/harness.js";

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
    expect(await ready()).toEqual({ status: 200, body: { ok: true, store: "up" } });
    const other = new SQLite(t.dbFile);
    try {
      other.exec("BEGIN IMMEDIATE");
      // Reads still work while the lock is held: a read probe would have said 200 here.
      expect(await t.store.tenants.get("nobody")).toBeUndefined();
      expect(await ready()).toEqual({ status: 503, body: { ok: false, store: "down" } });
      // Still ready for traffic: a balancer keeps sending verifies, which answer degraded, not 503.
      expect(await traffic()).toEqual({ status: 200, body: { ok: true, store: "down" } });
      other.exec("ROLLBACK");
      expect(await ready()).toEqual({ status: 200, body: { ok: true, store: "up" } });
    } finally {
      other.close();
    }
  });
});
