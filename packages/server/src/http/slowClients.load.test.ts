import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarden, type WardenProcess, wardenCli } from "../lib/wardenProcess.js";
import { tempDir } from "../testing/harness.js";

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
const sockets: net.Socket[] = [];

beforeAll(async () => {
  warden = await startWarden(env);
  await wardenCli(env, "tenant", "create", "acme");
  ({ apiKey } = JSON.parse(
    await wardenCli(env, "key", "create", "--tenant", "acme", "--scopes", "verify:write", "--json"),
  ) as { apiKey: string });
}, 30_000);
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await warden.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A client that sends a verify's headers, then one byte of its body every `everyMs`; resolves when cut. */
function trickler(url: string, everyMs: number): { closed: Promise<number> } {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), "127.0.0.1");
  sockets.push(socket);
  const opened = Date.now();
  socket.on("error", () => undefined);
  socket.on("data", () => undefined);
  socket.on("connect", () => {
    socket.write(
      `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
    );
  });
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write("{");
  }, everyMs);
  const closed = new Promise<number>((resolve) =>
    socket.once("close", () => {
      clearInterval(timer);
      resolve(Date.now() - opened);
    }),
  );
  return { closed };
}

/** A client that opens a connection and sends only part of its headers. */
function silentHeaders(url: string): Promise<number> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), "127.0.0.1", () => socket.write("POST /v1/verify HTTP/1.1\r\nHo"));
  sockets.push(socket);
  socket.on("error", () => undefined);
  // Read what the server sends (its 408), so the socket's close is seen.
  socket.resume();
  const opened = Date.now();
  return new Promise((resolve) => socket.once("close", () => resolve(Date.now() - opened)));
}

const verify = () =>
  fetch(`${warden.url}/v1/verify`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ action: "signup", subject: { userAgent: "curl/8.5.0" } }),
  });

describe("slow clients", () => {
  it("a body trickled one byte at a time is cut at the request timeout; unfinished headers at the headers timeout; verifies keep answering", async () => {
    const slow = Array.from({ length: 200 }, () => trickler(warden.url, 300));
    const headers = Array.from({ length: 50 }, () => silentHeaders(warden.url));
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
    const headersCut = await Promise.all(headers);
    expect(Math.max(...headersCut)).toBeLessThan(1000 + 1500);
    expect((await verify()).status).toBe(200);
  }, 20_000);

  it("SIGTERM finishes within the grace period while slow clients are connected", async () => {
    const slow = Array.from({ length: 20 }, () => trickler(warden.url, 200));
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
