import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../store/interfaces.js";
import { bearer, faultyStore, makeTestApp, type TestApp } from "../../testing/harness.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function setup() {
  const failing = new Set<string>();
  t = await makeTestApp({
    wrapStore: (s) => faultyStore(s, { failing, error: () => new StoreUnavailableError("injected outage") }),
  });
  await t.tenant("acme");
  const { apiKey } = await t.key("acme");
  const eventId = (
    await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(apiKey),
      payload: { action: "signup", subject: {} },
    })
  ).json().eventId as string;
  const send = (payload: Record<string, unknown>, key?: string) =>
    (t as TestApp).app.inject({
      method: "POST",
      url: "/v1/feedback",
      headers: { ...bearer(apiKey), ...(key ? { "idempotency-key": key } : {}) },
      payload,
    });
  const stored = () => (t as TestApp).store.feedback.listForEvent("acme", eventId);
  return { failing, eventId, send, stored };
}

describe("an acknowledged observation is never lost; a failed one is never half-written", () => {
  it("503 feedback_lookup_failed when the event lookup fails, and nothing is stored", async () => {
    const { failing, eventId, send, stored } = await setup();
    failing.add("events.get");
    const res = await send({ eventId, outcome: "credit_burn", value: 10 });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: "service_unavailable", code: "feedback_lookup_failed" });
    expect(await stored()).toEqual([]);
  });

  it("503 feedback_lookup_failed when authentication cannot reach the store", async () => {
    const { failing, eventId, send } = await setup();
    failing.add("apiKeys.findByHash");
    const res = await send({ eventId, outcome: "converted" });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe("feedback_lookup_failed");
  });

  it("503 feedback_ingest_failed when the write fails; the retry with the same key stores it exactly once", async () => {
    const { failing, eventId, send, stored } = await setup();
    failing.add("feedback.append");
    const body = { eventId, outcome: "credit_burn", value: 10 };
    const failed = await send(body, "k-1");
    expect(failed.statusCode).toBe(503);
    expect(failed.json().code).toBe("feedback_ingest_failed");
    expect(await stored()).toEqual([]);
    failing.clear();
    expect((await send(body, "k-1")).statusCode).toBe(200);
    expect((await send(body, "k-1")).headers["idempotent-replayed"]).toBe("true");
    expect(await stored()).toHaveLength(1);
  });

  it("a fault between the idempotency claim and the insert rolls both back (a real SQLite failure)", async () => {
    const { eventId, send, stored } = await setup();
    const db = (t as TestApp).dbFile;
    const admin = new SQLite(db);
    admin.exec(
      "CREATE TRIGGER fail_feedback BEFORE INSERT ON feedback BEGIN SELECT RAISE(ABORT, 'injected fault'); END;",
    );
    try {
      const res = await send({ eventId, outcome: "chargeback", value: 99 }, "k-mid");
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe("feedback_ingest_failed");
      // The claim of k-mid was rolled back with the insert: no stored answer exists to replay.
      const claim = admin.prepare("SELECT count(*) AS n FROM idempotency WHERE key = 'k-mid'").get() as {
        n: number;
      };
      expect(claim.n).toBe(0);
      expect(await stored()).toEqual([]);
    } finally {
      admin.exec("DROP TRIGGER fail_feedback");
      admin.close();
    }
    const retry = await send({ eventId, outcome: "chargeback", value: 99 }, "k-mid");
    expect(retry.statusCode).toBe(200);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
    expect(await stored()).toHaveLength(1);
  });

  it("an ok answer means the observation is in the database file (another connection reads it)", async () => {
    const { eventId, send } = await setup();
    expect((await send({ eventId, outcome: "converted", value: 5000 })).statusCode).toBe(200);
    const other = new SQLite((t as TestApp).dbFile, { readonly: true });
    const row = other.prepare("SELECT outcome, value, status FROM feedback WHERE event_id = ?").get(eventId);
    other.close();
    expect(row).toEqual({ outcome: "converted", value: 5000, status: "effective" });
  });
});
