import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config.js";
import { makeTestApp, type TestApp } from "../testing/harness.js";
import { adminHostAllowed } from "./adminHosts.js";

/**
 * DNS rebinding: a page on a site whose DNS then answers with Warden's address reads it as its own
 * origin, sending its own name as Host. The operator's surfaces answer only to addresses, localhost,
 * one-label names and the names WARDEN_ADMIN_HOSTS lists (http/adminHosts.ts); the API is untouched.
 */
const ADMIN = ["/metrics", "/docs", "/openapi.json", "/console/"];

describe("the admin routes' Host", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp({ env: { WARDEN_ADMIN_HOSTS: "warden.ops.example, console.example.org." } });
  });
  afterAll(() => t?.close());
  const get = (url: string, host: string) => t.app.inject({ method: "GET", url, headers: { host } });

  it.each(ADMIN)("%s is refused to a rebound public name: 403 host_not_allowed", async (url) => {
    for (const host of ["rebind.attacker.example:8080", "rebind.attacker.example", "1.2.3.4.nip.io:80"]) {
      const res = await get(url, host);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: "host_not_allowed" });
      expect(res.body).not.toContain("warden_");
    }
  });

  it.each(ADMIN)("%s answers an address, localhost, a service name and a listed name", async (url) => {
    for (const host of [
      "127.0.0.1:8080",
      "10.0.3.7",
      "[::1]:8080",
      "localhost:8080",
      "app.localhost",
      "warden:8080",
      "WARDEN.OPS.EXAMPLE:9090",
      "console.example.org",
    ]) {
      const res = await get(url, host);
      expect(res.statusCode, `${url} with Host ${host}`).not.toBe(403);
      expect(res.statusCode, `${url} with Host ${host}`).toBeLessThan(400);
    }
  });

  it("the API and the probes answer any Host", async () => {
    expect((await get("/healthz", "rebind.attacker.example")).statusCode).toBe(200);
    const api = await t.app.inject({
      method: "POST",
      url: "/v1/verify",
      headers: { host: "rebind.attacker.example" },
      payload: {},
    });
    expect(api.statusCode).toBe(401);
  });
});

describe("WARDEN_ADMIN_HOSTS", () => {
  it("* lets every Host reach the admin routes", async () => {
    const t = await makeTestApp({ env: { WARDEN_ADMIN_HOSTS: "*" } });
    try {
      const res = await t.app.inject({
        method: "GET",
        url: "/metrics",
        headers: { host: "anything.example" },
      });
      expect(res.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it.each(["warden.example:8080", "https://warden.example", "a b", "*.example", "-bad.example"])(
    "refuses %s at start",
    (entry) => {
      expect(() => loadConfig({ WARDEN_ADMIN_HOSTS: `ok.example,${entry}` })).toThrow(ConfigError);
    },
  );

  it("reads names case-insensitively, without a trailing dot", () => {
    expect(loadConfig({ WARDEN_ADMIN_HOSTS: "Warden.Example." }).adminHosts).toEqual(["warden.example"]);
    expect(loadConfig({}).adminHosts).toEqual([]);
  });
});

describe("adminHostAllowed", () => {
  it.each([
    [undefined, false],
    ["", false],
    [":8080", false],
    ["[]", false],
    ["evil.example.", false],
    ["127.0.0.1.nip.io", false],
    ["203.0.113.9:80", true],
    ["[2001:db8::1]", true],
    ["LOCALHOST", true],
    ["metrics-scraper.localhost:1", true],
    ["warden.", true],
  ] as const)("Host %j: %s", (host, allowed) => {
    expect(adminHostAllowed(host, [])).toBe(allowed);
  });
});
