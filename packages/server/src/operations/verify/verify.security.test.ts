import fs from "node:fs";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { buildApp, loggerOptions } from "../../app.js";
import { bearer, CHROME_UA, makeTestApp, type TestApp } from "../../testing/harness.js";

const RAW_EMAIL = "pii.person+promo@example.org";
const RAW_IP = "203.0.113.77";
const FORWARDED_IP = "198.51.100.23";

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
  it("carry a request id and never the API key or request bodies", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const base = t ?? (await makeTestApp());
    t = base;
    await base.tenant("logged", { rawPii: true });
    const { apiKey } = await base.key("logged");
    const app = await buildApp(base.deps, {
      logger: { ...(loggerOptions("info") as object), stream: sink } as never,
    });
    await app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: { ...bearer(apiKey), cookie: "session=secret-cookie" },
      payload: { action: "signup", subject: { email: RAW_EMAIL, ip: RAW_IP } },
    });
    await app.close();
    const text = lines.join("");
    expect(text).toContain('"reqId"');
    for (const secret of [apiKey, RAW_EMAIL, RAW_IP, "secret-cookie"]) expect(text).not.toContain(secret);
    expect(pino).toBeDefined();
  });
});
