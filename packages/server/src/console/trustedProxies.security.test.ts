import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config.js";
import { makeTestApp, type TestApp, windowStartClock } from "../testing/harness.js";

/**
 * Behind a TLS-terminating proxy (WARDEN_TRUSTED_PROXIES), the console cookie is Secure and sign-ins
 * are limited per client, not per proxy; forwarded headers from anyone else change nothing.
 */
const PROXY = "10.0.0.7";
let behind: TestApp;
let direct: TestApp;
let key: string;
let directKey: string;

const signIn = (t: TestApp, apiKey: string, remoteAddress: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: "POST",
    url: "/console/session",
    headers: {
      "content-type": "application/json",
      host: "warden.test",
      origin: "http://warden.test",
      ...headers,
    },
    payload: { apiKey },
    remoteAddress,
  });

beforeAll(async () => {
  behind = await makeTestApp({
    clock: windowStartClock(60),
    env: {
      WARDEN_TRUSTED_PROXIES: `${PROXY}, 10.1.0.0/16`,
      WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "2",
      WARDEN_ADMIN_HOSTS: "warden.test",
    },
  });
  direct = await makeTestApp({
    clock: windowStartClock(60),
    env: { WARDEN_CONSOLE_SIGNINS_PER_MINUTE: "2", WARDEN_ADMIN_HOSTS: "warden.test" },
  });
  await behind.tenant("acme");
  await direct.tenant("acme");
  key = (await behind.key("acme", { scopes: ["ledger:read"] })).apiKey;
  directKey = (await direct.key("acme", { scopes: ["ledger:read"] })).apiKey;
});
afterAll(async () => {
  await behind.close();
  await direct.close();
});

describe("trusted proxies", () => {
  it("through a trusted proxy that terminated TLS, the session cookie is Secure", async () => {
    const res = await signIn(behind, key, PROXY, {
      "x-forwarded-proto": "https",
      "x-forwarded-for": "198.51.100.1",
    });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers["set-cookie"])).toMatch(/; Secure/);
  });

  it("the same headers from an address that is not a trusted proxy change nothing: no Secure", async () => {
    const res = await signIn(behind, key, "203.0.113.9", { "x-forwarded-proto": "https" });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers["set-cookie"])).not.toMatch(/Secure/);
    const none = await signIn(direct, directKey, PROXY, { "x-forwarded-proto": "https" });
    expect(String(none.headers["set-cookie"])).not.toMatch(/Secure/);
  });

  it("sign-ins are limited per client behind the proxy: one client's flood does not lock out another", async () => {
    const from = (client: string) =>
      signIn(behind, key, PROXY, { "x-forwarded-for": client, "x-forwarded-proto": "https" });
    for (let i = 0; i < 2; i++) expect((await from("198.51.100.20")).statusCode).toBe(200);
    expect((await from("198.51.100.20")).statusCode).toBe(429);
    expect((await from("198.51.100.21")).statusCode).toBe(200);
  });

  it("behind the proxy a client is its IPv6 /64: rotating addresses within it does not reset the limit", async () => {
    const from = (client: string) =>
      signIn(behind, key, PROXY, { "x-forwarded-for": client, "x-forwarded-proto": "https" });
    expect((await from("2001:db8:5:6::1")).statusCode).toBe(200);
    expect((await from("2001:db8:5:6::2")).statusCode).toBe(200);
    for (const rotated of ["2001:db8:5:6::3", "2001:db8:5:6:a:b:c:d", "2001:db8:5:6:ffff::1"]) {
      expect((await from(rotated)).statusCode, rotated).toBe(429);
    }
    expect((await from("2001:db8:5:7::1")).statusCode).toBe(200);
  });

  it("a setting that is not an address or CIDR range is a configuration error naming it", () => {
    expect(() => loadConfig({ WARDEN_TRUSTED_PROXIES: "10.0.0.1, balancer.internal" })).toThrow(ConfigError);
    expect(() => loadConfig({ WARDEN_TRUSTED_PROXIES: "10.0.0.0/99" })).toThrow(/WARDEN_TRUSTED_PROXIES/);
    expect(loadConfig({ WARDEN_TRUSTED_PROXIES: " 10.0.0.1 ,::1, 10.2.0.0/16" }).trustedProxies).toEqual([
      "10.0.0.1",
      "::1",
      "10.2.0.0/16",
    ]);
  });
});
