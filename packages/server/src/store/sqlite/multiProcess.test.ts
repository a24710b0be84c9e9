import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir, testEvent } from "../../testing/harness.js";
import { openSqliteStore } from "./sqliteStore.js";

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
/** The compiled adapter (npm test builds before it runs the tests). */
const compiled = path.resolve(here, "../../../dist/store/sqlite/sqliteStore.js");

/** One worker process: hits a shared counter and races for shared idempotency keys. */
const WORKER = `
const { openSqliteStore } = await import(process.env.ADAPTER);
const store = await openSqliteStore({ file: process.env.DB, busyTimeoutMs: 5000 });
const me = process.env.WORKER;
const counts = [];
const outcomes = [];
for (let i = 0; i < 40; i++) {
  const [r] = await store.counters.hit([{ name: "shared", windowMs: 3600000 }], 1000);
  counts.push(r.current);
  const o = await store.events.record(
    { id: "evt_" + me + "_" + i, tenantId: "t", keyId: "k", createdAt: 1000, action: "signup", surface: null, session: null,
      decision: "allow", wouldBeDecision: "allow", actorType: "unknown", confidence: 0, reasons: ["r"], degraded: false,
      enforcementMode: "enforce", costs: { falseAllow: 1, falseChallenge: 1, falseDeny: 3 }, signals: {},
      engineVersion: "e", policyVersion: "p", decidedBy: "model", risk: null },
    { tenantId: "t", operation: "verify", key: "key-" + (i % 10), response: { fingerprint: "f", statusCode: 200, body: { by: me } }, expiresAt: 9e12 },
  );
  outcomes.push(o.kind);
  const outcome = i % 2 ? "false_positive" : "abuse_confirmed";
  await store.feedback.append(
    { feedbackId: "fb_" + me + "_" + i, tenantId: "t", eventId: "evt_contested", outcome, value: null, unit: null,
      source: null, observedAt: 1000, receivedAt: 1000, identity: me + i },
    [outcome === "false_positive" ? "abuse_confirmed" : "false_positive"],
    undefined,
  );
}
await store.close();
process.stdout.write(JSON.stringify({ counts, outcomes }));
`;

describe("sqlite across processes", () => {
  const dir = tempDir();
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("loses no counter hit, records each idempotency key once and keeps one side of a feedback conflict effective when four processes share one file", async () => {
    const db = path.join(dir, "shared.db");
    const setup = await openSqliteStore({ file: db, busyTimeoutMs: 5000 });
    await setup.tenants.create({ id: "t", rawPii: false, logOnly: false, createdAt: 0 });
    await setup.events.record(testEvent("evt_contested", { tenantId: "t" }), undefined);
    await setup.close();

    const workers = await Promise.all(
      ["w1", "w2", "w3", "w4"].map((w) =>
        run(process.execPath, ["--input-type=module", "-e", WORKER], {
          env: { ...process.env, ADAPTER: compiled, DB: db, WORKER: w },
        }),
      ),
    );
    const results = workers.map((w) => JSON.parse(w.stdout) as { counts: number[]; outcomes: string[] });
    const allCounts = results.flatMap((r) => r.counts).sort((x, y) => x - y);
    expect(allCounts).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
    const recorded = results.flatMap((r) => r.outcomes).filter((o) => o === "recorded");
    expect(recorded).toHaveLength(10);

    const check = await openSqliteStore({ file: db, busyTimeoutMs: 5000 });
    const [after] = await check.counters.hit([{ name: "shared", windowMs: 3600000 }], 1000);
    expect(after?.current).toBe(161);
    // 160 conflicting observations from four processes on one event: one side effective, in order.
    const contested = await check.feedback.listForEvent("t", "evt_contested");
    expect(contested).toHaveLength(160);
    const winner = contested[0]?.outcome;
    for (const o of contested) expect(o.status).toBe(o.outcome === winner ? "effective" : "quarantined");
    await check.close();
  }, 60_000);
});
