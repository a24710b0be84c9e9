import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarden, type WardenProcess } from "../lib/wardenProcess.js";
import { wardenCliInProcess } from "../testing/cliSandbox.js";
import { tempDir } from "../testing/harness.js";
import { type SlowClient, silentHeaders, trickler } from "../testing/slowClients.js";

/**
 * Slow clients cannot hold a Warden process: a client that sends its headers and then trickles its
 * body is cut at the request timeout, normal verifies keep answering meanwhile, and SIGTERM finishes
 * within the shutdown grace period even while such clients are connected.
 */
const dir = tempDir("warden-slow-");
const env = {
  WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "warden.db")}`,
  WARDEN_LOG_LEVEL: "warn",
  WARDEN_VERIFY_DEADLINE_MS: "45",
  WARDEN_REQUEST_TIMEOUT_MS: "2000",
  WARDEN_HEADERS_TIMEOUT_MS: "1000",
  WARDEN_SHUTDOWN_GRACE_MS: "1500",
};
let warden: WardenProcess;
let apiKey: string;
const clients: SlowClient[] = [];

beforeAll(async () => {
  warden = await startWarden(env);
  await wardenCliInProcess(env, "tenant", "create", "acme");
  ({ apiKey } = JSON.parse(
    await wardenCliInProcess(env, "key", "create", "--tenant", "acme", "--scopes", "verify:write", "--json"),
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
    const during: number[] = [];
    for (let i = 0; i < 20; i++) {
      during.push((await verify()).status);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(during.every((s) => s === 200)).toBe(true);
    const cut = await Promise.all(slow.map((s) => s.closed));
    // Request timeout 2 s, checked every second by Node.
    expect(Math.max(...cut)).toBeLessThan(2000 + 1500);
    expect(Math.min(...cut)).toBeGreaterThanOrEqual(1900);
    const headersCut = await Promise.all(headers.map((h) => h.closed));
    expect(Math.max(...headersCut)).toBeLessThan(1000 + 1500);
    expect((await verify()).status).toBe(200);
  }, 20_000);

  it("SIGTERM finishes within the grace period while slow clients are connected", async () => {
    const slow = Array.from({ length: 20 }, () => trickler(warden.url, apiKey, 200));
    clients.push(...slow);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const code = await warden.stop();
    const took = Date.now() - started;
    expect(code).toBe(0);
    // Grace 1.5 s (the request timeout, 2 s, would cut them later); then the store closes.
    expect(took).toBeLessThan(1500 + 1500);
    expect(took).toBeGreaterThanOrEqual(1000);
    await Promise.all(slow.map((s) => s.closed));
  }, 20_000);
});
