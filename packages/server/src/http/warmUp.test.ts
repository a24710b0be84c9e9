import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { REHEARSAL_TENANT } from "../operations/verify/rehearsal.js";
import { StoreUnavailableError } from "../store/interfaces.js";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../testing/harness.js";
import { KnownCallers } from "./auth.js";

/** Rows of the tables a verify writes, read from the SQLite file directly. */
function writtenRows(dbFile: string): Record<string, number> {
  const db = new SQLite(dbFile, { readonly: true });
  try {
    const count = (table: string) =>
      (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return { events: count("events"), counters: count("counters"), idempotency: count("idempotency") };
  } finally {
    db.close();
  }
}

describe("start-up warm-up (app.warmUp)", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await t?.close();
    t = undefined;
  });

  it("rehearses verify through the whole stack, writes nothing and forgets its key", async () => {
    let rehearsal: { callers: KnownCallers; hash: string } | undefined;
    const remember = KnownCallers.prototype.remember;
    vi.spyOn(KnownCallers.prototype, "remember").mockImplementation(function (
      this: KnownCallers,
      hash,
      caller,
    ) {
      if (caller.tenant.id === REHEARSAL_TENANT) rehearsal = { callers: this, hash };
      remember.call(this, hash, caller);
    });
    t = await makeTestApp();
    const report = await t.app.warmUp();
    expect(report).toMatchObject({ rehearsed: 32, failed: 0 });
    expect(report.storeError).toBeUndefined();
    expect(writtenRows(t.dbFile)).toEqual({ events: 0, counters: 0, idempotency: 0 });
    expect(rehearsal).toBeDefined();
    expect(rehearsal?.callers.recall(rehearsal.hash)).toBeUndefined();

    // Real verifies afterwards write as usual, and the metrics count only them.
    const key = await t.key(await t.tenant("acme"));
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(key.apiKey),
      payload: { action: "signup", subject: {} },
    });
    expect(res.statusCode).toBe(200);
    expect(writtenRows(t.dbFile).events).toBe(1);
    const metrics = (await t.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(metrics).toMatch(
      /^warden_http_requests_total\{route="\/v1\/verify",method="POST",status="200"\} 1$/m,
    );
  });

  it("stops after one round when the store cannot answer, and says so", async () => {
    const failing = new Set(["idempotency", "policies"]);
    t = await makeTestApp({
      wrapStore: (s) => ({
        ...faultyStore(s, { failing, error: () => new StoreUnavailableError("down") }),
        warmUp: async () => {
          throw new StoreUnavailableError("connection refused");
        },
      }),
    });
    const report = await t.app.warmUp();
    expect(report.storeError).toBeInstanceOf(StoreUnavailableError);
    expect(report.rehearsed).toBe(4);
    expect(report.failed).toBeGreaterThan(0);
    expect(writtenRows(t.dbFile)).toEqual({ events: 0, counters: 0, idempotency: 0 });
  });
});
