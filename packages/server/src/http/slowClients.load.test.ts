import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWarden, stdoutOf } from "../testing/cliSandbox.js";
import { tempDir } from "../testing/harness.js";
import { type SlowClient, silentHeaders, trickler } from "../testing/slowClients.js";
import { startWarden, type WardenProcess } from "../testing/wardenProcess.js";

/**
 * Slow clients cannot hold a Warden process: a client that sends its headers and then trickles its
 * body is cut at the request timeout, normal verifies keep answering meanwhile, and SIGTERM finishes
 * within the shutdown grace period even while such clients are connected.
 *
 * Which limit cut a client is read from what it was sent, not from a clock: a timeout answers 408
 * before it closes the connection, the end of the shutdown grace period closes it bare. The limits are
 * far enough apart (headers 1 s, grace 1.5 s, request 4 s; Node checks them every second) that the
 * one meant to cut a client comes first even on a starved machine.
 */
const dir = tempDir("warden-slow-");
const env = {
  WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "warden.db")}`,
  WARDEN_LOG_LEVEL: "warn",
  WARDEN_VERIFY_DEADLINE_MS: "45",
  WARDEN_REQUEST_TIMEOUT_MS: "4000",
  WARDEN_HEADERS_TIMEOUT_MS: "1000",
  WARDEN_SHUTDOWN_GRACE_MS: "1500",
};
let warden: WardenProcess;
let apiKey: string;
const clients: SlowClient[] = [];

beforeAll(async () => {
  warden = await startWarden(env);
  stdoutOf(await runWarden(env, ["tenant", "create", "acme"]));
  ({ apiKey } = JSON.parse(
    stdoutOf(
      await runWarden(env, ["key", "create", "--tenant", "acme", "--scopes", "verify:write", "--json"]),
    ),
  ) as { apiKey: string });
}, 30_000);
afterAll(async () => {
  for (const c of clients) c.socket.destroy();
  await warden.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const verify = () =>
  fetch(`${warden.url}/v1/verify`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ action: "signup", subject: { userAgent: "curl/8.5.0" } }),
  });

describe("slow clients", () => {
  it("a body trickled one byte at a time is cut at the request timeout; unfinished headers at the headers timeout; verifies keep answering", async () => {
    const slow = Array.from({ length: 200 }, () => trickler(warden.url, apiKey, 300));
    const headers = Array.from({ length: 50 }, () => silentHeaders(warden.url));
    clients.push(...slow, ...headers);
    // The order in which the server closed them: the headers timeout (1 s) comes before the request
    // timeout (4 s), which would also cut an unfinished header, so a client of either kind tells.
    const order: string[] = [];
    const cut = slow.map((s) => s.closed.finally(() => order.push("body")));
    const headersCut = headers.map((h) => h.closed.finally(() => order.push("headers")));
    const during: number[] = [];
    for (let i = 0; i < 20; i++) {
      during.push((await verify()).status);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(during.every((s) => s === 200)).toBe(true);
    // Every one cut by the server (the test never closes them; a body of 1,000 bytes at one byte every
    // 300 ms would take five minutes), each answered 408 Request Timeout first.
    const answers = await Promise.all([...cut, ...headersCut]);
    expect(answers.filter((a) => !/^HTTP\/1\.1 408 /.test(a))).toEqual([]);
    expect(order).toEqual([...Array(headers.length).fill("headers"), ...Array(slow.length).fill("body")]);
    expect((await verify()).status).toBe(200);
  }, 20_000);

  it("SIGTERM finishes within the grace period while slow clients are connected", async () => {
    const slow = Array.from({ length: 20 }, () => trickler(warden.url, apiKey, 200));
    clients.push(...slow);
    await new Promise((r) => setTimeout(r, 300));
    // Exits 0 by itself: stop() kills a process still running at the deploy files' stop timeout (the
    // grace period + 20 s), and a killed process has no exit code.
    expect(await warden.stop()).toBe(0);
    // The connections lived until the grace period was over (an immediate cut would have let the
    // server close before it, with no such line), then were closed bare by it: every one, none with
    // the 408 of the request timeout (4 s), which would cut them later.
    expect(warden.output()).toMatch(/shutdown grace period over: closing connections/);
    expect(await Promise.all(slow.map((s) => s.closed))).toEqual(slow.map(() => ""));
  }, 40_000);
});
