import fs from "node:fs";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, loggerOptions } from "../../app.js";
import { bearer, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";

const RAW_EMAIL = "pii.person+promo@example.org";
const RAW_IP = "203.0.113.77";
const FORWARDED_IP = "198.51.100.23";
/** A value sent only in request bodies: a log line that holds it holds a body. */
const BODY_MARKER = "sess-body-marker-5c1e9a";

let t: TestApp | undefined;
afterAll(() => t?.close());

function bytesOf(dbFile: string): string {
  return [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f).toString("latin1"))
    .join("\n");
}

describe("raw PII never reaches the disk", () => {
  it("stores no raw email, raw IP or client-IP header value, with or without the tenant's opt-in", async () => {
    t = await makeTestApp();
    await t.tenant("optin", { rawPii: true });
    await t.tenant("plain");
    const optinKey = (await t.key("optin")).apiKey;
    const plainKey = (await t.key("plain")).apiKey;
    const headers = {
      "x-forwarded-for": FORWARDED_IP,
      "x-real-ip": FORWARDED_IP,
      "cf-connecting-ip": FORWARDED_IP,
    };
    const withPii = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: { ...bearer(optinKey), "idempotency-key": "pii-1" },
      payload: { action: "signup", subject: { email: RAW_EMAIL, ip: RAW_IP, userAgent: CHROME_UA, headers } },
    });
    expect(withPii.statusCode).toBe(200);
    const hashedOnly = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: { ...bearer(plainKey), "idempotency-key": "pii-2" },
      payload: { action: "signup", subject: { ipTrunc: "203.0.113.0/24", userAgent: CHROME_UA, headers } },
    });
    expect(hashedOnly.statusCode).toBe(200);
    const refused = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: bearer(plainKey),
      payload: { action: "signup", subject: { email: RAW_EMAIL } },
    });
    expect(refused.statusCode).toBe(403);

    const disk = bytesOf(t.dbFile);
    expect(disk.length).toBeGreaterThan(0);
    // The event was written (its network prefix is there) but no full value is.
    expect(disk).toContain("203.0.113.0/24");
    for (const secret of [RAW_EMAIL, "pii.person", RAW_IP, FORWARDED_IP]) expect(disk).not.toContain(secret);
  });
});

describe("logs", () => {
  let logged: TestApp;
  beforeAll(async () => {
    logged = await makeTestApp();
  });
  afterAll(() => logged.close());

  it("carry a request id and never the API key or request bodies", async () => {
    await logged.tenant("logged", { rawPii: true });
    const { apiKey } = await logged.key("logged");
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    // The most verbose level: no line at any level may carry what a caller sent.
    const app = await buildApp(logged.deps, {
      logger: { ...(loggerOptions("trace") as object), stream: sink } as never,
    });
    const send = (requestId: string, subject: Record<string, unknown>) =>
      app.inject({
        method: "POST",
        url: "/v1/verify",
        headers: { ...bearer(apiKey), cookie: "session=secret-cookie", "x-request-id": requestId },
        payload: { action: "signup", session: BODY_MARKER, subject },
      });
    const scored = await send("req-logs-scored", { email: RAW_EMAIL, ip: RAW_IP, userAgent: CHROME_UA });
    // Refused input is where a body would most likely be logged: in the error's message or details.
    const refused = await send("req-logs-refused", { email: RAW_EMAIL, ip: `${RAW_IP}/${BODY_MARKER}` });
    await app.close();

    expect(scored.statusCode).toBe(200);
    expect(refused.statusCode).toBe(400);
    for (const [answer, id] of [
      [scored, "req-logs-scored"],
      [refused, "req-logs-refused"],
    ] as const) {
      expect(answer.headers["x-request-id"]).toBe(id);
      // The request's line carries the id it was answered with.
      expect(lines.filter((l) => l.reqId === id && l.msg === "request completed")).toHaveLength(1);
    }
    // Every line written about a request carries its id.
    expect(
      lines.filter((l) => ("req" in l || "res" in l || "err" in l) && typeof l.reqId !== "string"),
    ).toEqual([]);
    const text = JSON.stringify(lines);
    for (const secret of [
      apiKey,
      apiKey.slice("wdn_".length),
      RAW_EMAIL,
      RAW_IP,
      "secret-cookie",
      BODY_MARKER,
    ])
      expect(text).not.toContain(secret);
  });
});
