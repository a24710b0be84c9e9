import http from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JA4_HEADER, MODEL_JA4_HEADER, openDoor } from "./lib/stack.mjs";

/**
 * The realtools front door (lib/stack.mjs) without browsers: it terminates TLS, passes the JA4 it
 * computed in X-JA4 (never one the client sent), honours a model's declared JA4 only on a MODEL
 * class's door, passes none as a plain reverse proxy, and keeps the client's headers in their order
 * and case.
 */
describe("realtools door", () => {
  let received: string[][] = [];
  const app = http.createServer((req, res) => {
    received.push(req.rawHeaders);
    req.resume();
    res.end("ok");
  });
  const agent = new http.Agent({ keepAlive: true });
  let appPort = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    appPort = (app.address() as AddressInfo).port;
  });
  afterAll(async () => {
    agent.destroy();
    app.closeAllConnections();
    await new Promise((r) => app.close(r));
  });

  const through = async (modelJa4: boolean, ja4 = true) => {
    received = [];
    const door = await openDoor(appPort, "73.22.33.44", agent, { modelJa4, ja4 });
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      expect(door.url).toMatch(/^https:\/\/localhost:\d+$/);
      const res = await request(`${door.url}/`, {
        dispatcher,
        headers: [
          "User-Agent",
          "probe",
          "X-JA4",
          "t13d0000h2_forged",
          MODEL_JA4_HEADER,
          "t13d9999h2_model",
          "Accept",
          "*/*",
        ],
      });
      expect(await res.body.text()).toBe("ok");
    } finally {
      await dispatcher.close();
      await door.close();
    }
    return { raw: received[0] ?? [], door };
  };

  it("passes the computed JA4 and removes what the client wrote, on a bot's door", async () => {
    const { raw, door } = await through(false);
    const names = raw.filter((_, i) => i % 2 === 0);
    expect(names).toEqual(["host", "connection", "User-Agent", "Accept", "X-Forwarded-For", JA4_HEADER]);
    const ja4 = raw[raw.length - 1];
    // Node's own ClientHello: TLS 1.3, SNI (a host name), HTTP/1.1 only (undici).
    expect(ja4).toMatch(/^t13d\d{4}h1_[0-9a-f]{12}_[0-9a-f]{12}$/);
    expect(raw[raw.length - 3]).toBe("73.22.33.44");
    expect([...door.ja4]).toEqual([ja4]);
    expect([...door.tlsJa4]).toEqual([ja4]);
  });

  it("passes a model's declared JA4 on a MODEL class's door only", async () => {
    const { raw, door } = await through(true);
    expect(raw.slice(-2)).toEqual([JA4_HEADER, "t13d9999h2_model"]);
    expect(raw.filter((v) => v.toLowerCase() === MODEL_JA4_HEADER)).toEqual([]);
    expect([...door.ja4]).toEqual(["t13d9999h2_model"]);
    expect([...door.tlsJa4][0]).toMatch(/^t13d\d{4}h1_/);
  });

  it("passes no JA4 at all as a plain reverse proxy (--no-ja4), a model's included", async () => {
    for (const model of [false, true]) {
      const { raw, door } = await through(model, false);
      const names = raw.filter((_, i) => i % 2 === 0);
      expect(names).toEqual(["host", "connection", "User-Agent", "Accept", "X-Forwarded-For"]);
      expect([...door.ja4]).toEqual(["(not passed)"]);
      expect([...door.tlsJa4][0]).toMatch(/^t13d\d{4}h1_/);
    }
  });
});
