import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../testing/harness.js";

/**
 * Idle keep-alive connections cannot lock callers out: one address holds at most
 * WARDEN_MAX_CONNECTIONS_PER_ADDRESS sockets, and near WARDEN_MAX_CONNECTIONS idle ones are closed
 * first, so a new caller is answered.
 */
let t: TestApp;
let port: number;
const sockets: net.Socket[] = [];
beforeAll(async () => {
  t = await makeTestApp({
    env: { WARDEN_MAX_CONNECTIONS: "40", WARDEN_MAX_CONNECTIONS_PER_ADDRESS: "30" },
  });
  port = Number(new URL(await t.app.listen({ host: "127.0.0.1", port: 0 })).port);
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await t.close();
});

/** A keep-alive connection that made one request and stays open idle; resolves once answered. */
function idleConnection(from = "127.0.0.1"): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: from }, () =>
      socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"),
    );
    sockets.push(socket);
    socket.once("data", () => resolve(socket));
    socket.once("error", reject);
    socket.once("close", () => reject(new Error("closed before its answer")));
  });
}
const closed = (s: net.Socket) => s.destroyed || s.readyState === "closed";

describe("connections", () => {
  it("one address holds at most its cap: the 31st socket is closed as it opens", async () => {
    const held = await Promise.all(Array.from({ length: 30 }, () => idleConnection()));
    await expect(idleConnection()).rejects.toThrow(/closed/);
    expect(held.filter(closed)).toHaveLength(0);
    for (const s of held) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
  });

  it("near the process's cap idle keep-alive connections are closed first, and a new caller is answered", async () => {
    // From three addresses, under each one's cap: 36 sockets is 90% of 40.
    const idle: net.Socket[] = [];
    for (let i = 0; i < 35; i++) idle.push(await idleConnection(`127.0.0.${2 + (i % 3)}`));
    expect(idle.filter(closed)).toHaveLength(0);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(idle.filter(closed).length).toBeGreaterThan(30);
  });
});
