import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../../testing/harness.js";

/**
 * Degraded comes from Warden's own faults, never from the caller's pace: a verify whose body arrives
 * 300 ms after its headers, under the longest deadline (45 ms), is scored like any other. (A first
 * verify warms the app up: what is tested is
 * where the deadline starts, not how fast a cold app answers.)
 */
let t: TestApp;
let port: number;
let apiKey: string;
beforeAll(async () => {
  t = await makeTestApp({ env: { WARDEN_VERIFY_DEADLINE_MS: "45" } });
  await t.tenant("slow");
  ({ apiKey } = await t.key("slow"));
  const url = await t.app.listen({ host: "127.0.0.1", port: 0 });
  port = Number(new URL(url).port);
});
afterAll(() => t.close());

/** Sends the headers, waits `delayMs`, then the body; resolves the parsed JSON answer. */
function verifyWithSlowBody(delayMs: number): Promise<Record<string, unknown>> {
  const body = JSON.stringify({
    action: "signup",
    session: "slow-body",
    subject: { userAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0.0.0", ipTrunc: "198.51.100.0/24" },
  });
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write(
        `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      );
      setTimeout(() => socket.write(body), delayMs);
    });
    let raw = "";
    socket.on("data", (d) => {
      raw += String(d);
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const json = raw.slice(raw.indexOf("\r\n\r\n") + 4);
      try {
        resolve(JSON.parse(json));
      } catch (err) {
        reject(new Error(`not JSON: ${raw.slice(0, 200)} (${String(err)})`));
      }
    });
  });
}

describe("verify's deadline and a slow body", () => {
  it("a body that arrives 300 ms after its headers is not degraded: the deadline starts when the body is complete", async () => {
    await verifyWithSlowBody(0);
    const verdict = await verifyWithSlowBody(300);
    expect(verdict.degraded).toBe(false);
    expect(verdict.eventId).toMatch(/^evt_/);
  });
});
