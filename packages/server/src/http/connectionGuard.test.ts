import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../testing/harness.js";
import { clientSource } from "./connectionGuard.js";

/**
 * Sockets cannot lock callers out: one source (an IPv4 address, an IPv6 /64) holds at most
 * WARDEN_MAX_CONNECTIONS_PER_ADDRESS sockets, and at WARDEN_MAX_CONNECTIONS a socket that carries no
 * request (just connected, headers still arriving, idle keep-alive) or is stalled gives way to a new
 * caller. Sources are 127.0.0.x addresses, which Linux routes to loopback.
 */
let t: TestApp | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await t?.close();
  t = undefined;
});

async function serve(env: Record<string, string>): Promise<number> {
  t = await makeTestApp({
    // Slow-header sockets must outlive the test unless the guard closes them.
    env: { WARDEN_HEADERS_TIMEOUT_MS: "30000", WARDEN_REQUEST_TIMEOUT_MS: "30000", ...env },
  });
  return Number(new URL(await t.app.listen({ host: "127.0.0.1", port: 0 })).port);
}

/** The sockets the server holds once it has taken every connection made so far. */
async function settled(expected: number): Promise<void> {
  const server = t?.app.server;
  for (let i = 0; i < 200; i++) {
    const n = await new Promise<number>((resolve) => server?.getConnections((_e, c) => resolve(c)));
    if (n === expected) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A socket from `from` that sends `head` once connected; resolves when connected (and `until` seen). */
function open(port: number, from: string, head: string, until?: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: from }, () => {
      socket.write(head);
      if (until === undefined) resolve(socket);
    });
    sockets.push(socket);
    socket.on("error", () => undefined);
    let seen = "";
    socket.on("data", (d) => {
      seen += String(d);
      if (until !== undefined && seen.includes(until)) resolve(socket);
    });
    socket.once("close", () => reject(new Error("closed")));
  });
}
const slowHeaders = (port: number, from: string) => open(port, from, "GET /healthz HTTP/1.1\r\nHo");
const idleKeepAlive = (port: number, from: string) =>
  open(port, from, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", "\r\n\r\n");
/** Headers complete, body promised and never sent: a request in flight that is stalled. */
const slowBody = (port: number, from: string) =>
  open(
    port,
    from,
    "POST /console/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n",
    "100 Continue",
  );
const closed = (s: net.Socket) => s.destroyed || s.readyState === "closed";
/** Resolves once the server has closed `s` (the test's timeout is the bound). */
const closes = (s: net.Socket) =>
  new Promise<void>((resolve) => (closed(s) ? resolve() : s.once("close", () => resolve())));

/** A caller that connects and asks at once: its status, or the error its socket met. */
function probe(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.1" }, () =>
      socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    );
    let seen = "";
    socket.on("data", (d) => {
      seen += String(d);
    });
    socket.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(seen)?.[1] ?? 0) || "closed"));
  });
}

const SOURCES = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"];

describe("connections", () => {
  it("slow-header sockets from five addresses fill the cap, and callers that ask at once are all answered", async () => {
    const port = await serve({ WARDEN_MAX_CONNECTIONS: "40", WARDEN_MAX_CONNECTIONS_PER_ADDRESS: "12" });
    const slow = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        slowHeaders(port, SOURCES[i % 5] as string).catch(() => undefined),
      ),
    );
    await settled(40);
    const answers: (number | string)[] = [];
    for (let i = 0; i < 9; i++) answers.push(await probe(port));
    expect(answers).toEqual(Array(9).fill(200));
    expect(slow.filter((s) => s && !closed(s)).length).toBeGreaterThan(20);
  });

  it("at the cap the oldest stalled request (its body never comes) gives way to a caller that asks at once", async () => {
    const port = await serve({ WARDEN_MAX_CONNECTIONS: "40", WARDEN_MAX_CONNECTIONS_PER_ADDRESS: "12" });
    const stalled: net.Socket[] = [];
    for (let i = 0; i < 40; i++) stalled.push(await slowBody(port, SOURCES[i % 4] as string));
    await settled(40);
    const answers: (number | string)[] = [];
    for (let i = 0; i < 3; i++) answers.push(await probe(port));
    expect(answers).toEqual([200, 200, 200]);
    // The oldest gave way: each probe took at most one slot, and a probe answered frees its own.
    await closes(stalled[0] as net.Socket);
    expect(stalled.slice(3).filter(closed)).toHaveLength(0);
  });

  it("a source at its cap gives up its own least recently used idle socket for a new one", async () => {
    const port = await serve({ WARDEN_MAX_CONNECTIONS: "40", WARDEN_MAX_CONNECTIONS_PER_ADDRESS: "10" });
    const other = await idleKeepAlive(port, "127.0.0.3");
    const held: net.Socket[] = [];
    for (let i = 0; i < 10; i++) held.push(await idleKeepAlive(port, "127.0.0.2"));
    const newest = await idleKeepAlive(port, "127.0.0.2");
    await closes(held[0] as net.Socket);
    expect(closed(newest)).toBe(false);
    expect(held.slice(1).filter(closed)).toHaveLength(0);
    expect(closed(other)).toBe(false);
  });

  it("a source whose every socket carries a request gets no more: its new socket is closed", async () => {
    const port = await serve({ WARDEN_MAX_CONNECTIONS: "40", WARDEN_MAX_CONNECTIONS_PER_ADDRESS: "5" });
    const busy: net.Socket[] = [];
    for (let i = 0; i < 5; i++) busy.push(await slowBody(port, "127.0.0.2"));
    await expect(idleKeepAlive(port, "127.0.0.2")).rejects.toThrow(/closed/);
    expect(busy.filter(closed)).toHaveLength(0);
    expect(await probe(port)).toBe(200);
  });

  it("a connection that sends nothing is answered 408 and closed at the headers timeout (Node counts it from the connection)", async () => {
    const port = await serve({ WARDEN_HEADERS_TIMEOUT_MS: "500", WARDEN_REQUEST_TIMEOUT_MS: "1000" });
    const socket = await open(port, "127.0.0.2", "");
    const answer = await new Promise<string>((resolve) => {
      let seen = "";
      socket.on("data", (d) => {
        seen += String(d);
      });
      socket.once("close", () => resolve(seen));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"request_timeout"');
  }, 15_000);
});

describe("clientSource: what one client is", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["::FFFF:cb00:7107", "203.0.113.7"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["2001:0DB8:0001:0002:0000:0000:0000:0042", "2001:db8:1:2::/64"],
    ["2001:db8:1:3::1", "2001:db8:1:3::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["not an address", "not an address"],
    ["1::2::3", "1::2::3"],
  ])("%s counts as %s", (address, source) => {
    expect(clientSource(address)).toBe(source);
  });
});
