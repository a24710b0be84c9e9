import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { claimSpooledEvents, spoolEvents } from "../operations/verify/degradedSpool.js";
import { runWarden, stdoutOf } from "../testing/cliSandbox.js";
import { FaultProxy } from "../testing/faultProxy.js";
import { tempDir, testEvent } from "../testing/harness.js";
import { postgresDatabaseOrSkip } from "../testing/postgres.js";
import { startWarden } from "../testing/wardenProcess.js";

/**
 * Degraded events outlive a graceful shutdown: a `warden serve` on PostgreSQL answers degraded
 * challenges while the database is cut off, is stopped with SIGTERM before the database returns,
 * and the next process started with the same spool directory writes those events, after which their
 * eventIds work for feedback.
 */
const SUITE = "degraded events spooled at shutdown";
const databaseUrl = await postgresDatabaseOrSkip(SUITE, "the spool-at-shutdown suite");
const spool = tempDir("warden-spool-");
afterAll(() => fs.rmSync(spool, { recursive: true, force: true }));

describe("the spool directory", () => {
  it("one file per shutdown, taken whole by exactly one of several processes claiming at once", async () => {
    const dir = path.join(spool, "unit");
    await spoolEvents(dir, [testEvent("evt_a", { degraded: true }), testEvent("evt_b", { degraded: true })]);
    await spoolEvents(dir, [testEvent("evt_c", { degraded: true })]);
    fs.writeFileSync(path.join(dir, "degraded-cut-by-hand.jsonl"), '{"id":"evt_d"}\nnot json\n');
    expect(fs.statSync(path.join(dir, fs.readdirSync(dir)[0] as string)).mode & 0o777).toBe(0o600);

    const claims = await Promise.all([
      claimSpooledEvents(dir),
      claimSpooledEvents(dir),
      claimSpooledEvents(dir),
    ]);
    const ids = claims.flatMap((c) => c.events.map((e) => e.id)).sort();
    expect(ids).toEqual(["evt_a", "evt_b", "evt_c"]);
    expect(claims.reduce((n, c) => n + c.unreadable, 0)).toBe(2);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(await claimSpooledEvents(path.join(spool, "absent"))).toEqual({ events: [], unreadable: 0 });
  });
});

if (databaseUrl) {
  describe(SUITE, () => {
    it("SIGTERM while PostgreSQL is unreachable spools the waiting events; the next process writes them", async () => {
      const proxy = await new FaultProxy("127.0.0.1", 5432).start();
      const viaProxy = new URL(databaseUrl);
      viaProxy.port = String(proxy.port);
      const dir = path.join(spool, "serve");
      const env = {
        WARDEN_DATABASE_URL: viaProxy.toString(),
        WARDEN_DEGRADED_SPOOL_DIR: dir,
        WARDEN_LOG_LEVEL: "info",
        WARDEN_VERIFY_DEADLINE_MS: "45",
        WARDEN_STORE_TIMEOUT_MS: "40",
      };
      try {
        const first = await startWarden(env);
        stdoutOf(await runWarden({ WARDEN_DATABASE_URL: databaseUrl }, ["tenant", "create", "acme"]));
        const created = stdoutOf(
          await runWarden({ WARDEN_DATABASE_URL: databaseUrl }, [
            "key",
            "create",
            "--tenant",
            "acme",
            "--scopes",
            "verify:write,feedback:write",
            "--json",
          ]),
        );
        const { apiKey } = JSON.parse(created) as { apiKey: string };
        const post = (url: string, body: unknown) =>
          fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
        // Known to this process before the outage, so its degraded answers carry the tenant's events:
        // a scored answer (a busy machine can make the first ones miss the 40 ms store timeout).
        let known = false;
        for (let i = 0; i < 20 && !known; i++) {
          const res = await post(`${first.url}/v1/verify`, { action: "signup", subject: {} });
          expect(res.status).toBe(200);
          known = ((await res.json()) as { degraded: boolean }).degraded === false;
          if (!known) await new Promise((r) => setTimeout(r, 200));
        }
        expect(known, "no verify was scored before the outage").toBe(true);

        proxy.set("cut");
        const eventIds: string[] = [];
        for (let i = 0; i < 5; i++) {
          const res = await post(`${first.url}/v1/verify`, {
            action: "signup",
            session: `s-${randomBytes(6).toString("hex")}`,
            subject: {},
          });
          const verdict = (await res.json()) as { decision: string; degraded: boolean; eventId: string };
          expect(verdict).toMatchObject({ decision: "challenge", degraded: true });
          eventIds.push(verdict.eventId);
        }
        // Exits 0 by itself with the database still cut: stop() kills a process still running after
        // the stop timeout the deploy files give a supervisor, and a killed process has no exit code.
        expect(await first.stop()).toBe(0);
        expect(first.output()).toMatch(/"events":5,.*degraded events not written to the store: spooled/);
        expect(first.output()).toMatch(/"stopped: requests finished, waiting events written or spooled/);
        expect(fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl"))).toHaveLength(1);

        proxy.set("pass");
        const second = await startWarden(env);
        try {
          expect(second.output()).toMatch(/"restored":5,.*queued for the store/);
          expect(fs.readdirSync(dir)).toEqual([]);
          for (const eventId of eventIds) {
            const res = await post(`${second.url}/v1/feedback`, { eventId, outcome: "converted" });
            expect({ eventId, status: res.status }).toEqual({ eventId, status: 200 });
          }
        } finally {
          await second.stop();
        }
      } finally {
        await proxy.stop();
      }
    }, 60_000);
  });
}
