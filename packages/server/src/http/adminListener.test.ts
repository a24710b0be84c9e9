import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../admin/apiKeys.js";
import { loadConfig } from "../config.js";
import { ALL_SCOPES } from "../domain.js";
import { type RunningServer, startServer } from "../serve.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { tempDir } from "../testing/harness.js";

/**
 * WARDEN_ADMIN_PORT: metrics, the API documentation and the console answer on the admin listener
 * only; the public listener answers 404 route_not_found for them and serves the API as before.
 */
const dir = tempDir();
const running: RunningServer[] = [];
afterAll(async () => {
  for (const s of running) await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>) {
  const server = await startServer(
    loadConfig({
      WARDEN_DATABASE_URL: `sqlite:${path.join(dir, `${running.length}.db`)}`,
      WARDEN_LOG_LEVEL: "silent",
      WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, `spool-${running.length}`),
      PORT: "0",
      HOST: "127.0.0.1",
      ...env,
    }),
    () => undefined,
  );
  running.push(server);
  return server;
}
const status = async (url: string, init?: RequestInit) => (await fetch(url, init)).status;

/** One request sent as written (fetch would normalise the path and drop a fragment). */
function raw(base: string, method: string, target: string): Promise<{ status: number; cookie: boolean }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const body = method === "POST" ? JSON.stringify({ apiKey: `wdn_${"A".repeat(43)}` }) : undefined;
    const req = http.request(
      {
        host: hostname,
        port,
        method,
        path: target,
        agent: false,
        headers: body ? { "content-type": "application/json", origin: base } : {},
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, cookie: res.headers["set-cookie"] !== undefined }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Spellings of the admin paths: percent-encoded letters and dots, a fragment or a query, HEAD, an
 * absolute-form target, the router's case, slash and semicolon rules. Each answers 404 on the public
 * port whether or not the router would take it for an admin route.
 */
const SPELLINGS: [method: string, target: string][] = [
  ["GET", "/%6detrics"],
  ["GET", "/%6D%65%74%72%69%63%73"],
  ["HEAD", "/%6detrics"],
  ["GET", "/metrics#x"],
  ["GET", "/metrics?x=1"],
  ["GET", "/%6detrics?x=1"],
  ["GET", "http://public.example/metrics"],
  ["GET", "http://public.example/%6detrics"],
  ["GET", "/%64ocs"],
  ["GET", "/%64ocs/"],
  ["GET", "/docs%2Fjson"],
  ["GET", "/%64ocs/json"],
  ["GET", "/%64ocs/static/index.html"],
  ["GET", "/openapi%2Ejson"],
  ["GET", "/openapi%2ejson"],
  ["GET", "/%6Fpenapi.json"],
  ["GET", "/%63onsole"],
  ["GET", "/%63onsole/"],
  ["GET", "/console%2F"],
  ["GET", "/%63onsole/index.html"],
  ["GET", "/%63onsole/session"],
  ["POST", "/%63onsole/session"],
  ["POST", "/console/%73ession"],
  ["POST", "/console/session#x"],
  ["POST", "http://public.example/console/session"],
  ["GET", "/METRICS"],
  ["GET", "//metrics"],
  ["GET", "/metrics/"],
  ["GET", "/metrics;x=1"],
  ["GET", "/./metrics"],
  ["GET", "/%2Fmetrics"],
];

describe("the admin listener", () => {
  it("serves metrics, docs and the console on its own port; the public port answers 404 for them and keeps the API", async () => {
    const server = await start({ WARDEN_ADMIN_PORT: "0", WARDEN_ADMIN_HOST: "127.0.0.1" });
    const admin = server.adminUrl as string;
    expect(admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(admin).not.toBe(server.url);
    for (const p of ["/metrics", "/openapi.json", "/docs", "/console/"]) {
      expect(await status(`${server.url}${p}`), `public ${p}`).toBe(404);
      expect(await status(`${admin}${p}`), `admin ${p}`).toBeLessThan(400);
    }
    const refused = await fetch(`${server.url}/metrics`);
    expect(await refused.json()).toMatchObject({ code: "route_not_found" });
    // A key made through the same database file, as `warden key create` would.
    const store = await openSqliteStore({ file: path.join(dir, "0.db"), busyTimeoutMs: 5000 });
    await store.tenants.create({ id: "acme", rawPii: false, logOnly: false, createdAt: Date.now() });
    const { apiKey } = await issueApiKey(store, {
      tenantId: "acme",
      scopes: [...ALL_SCOPES],
      logOnly: false,
      now: Date.now(),
    });
    await store.close();
    const verify = await fetch(`${server.url}/v1/verify`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ action: "signup", subject: {} }),
    });
    expect(verify.status).toBe(200);
    expect(await status(`${server.url}/healthz`)).toBe(200);
  });

  it("every spelling the router takes for an admin path is 404 on the public port (no console cookie)", async () => {
    const server = await start({ WARDEN_ADMIN_PORT: "0", WARDEN_ADMIN_HOST: "127.0.0.1" });
    const admin = server.adminUrl as string;
    for (const [method, target] of SPELLINGS) {
      const res = await raw(server.url, method, target);
      expect(res.status, `public ${method} ${target}`).toBe(404);
      expect(res.cookie, `public ${method} ${target}`).toBe(false);
    }
    // The encoded spellings are real: the router takes them for the admin routes, served on the admin port.
    for (const target of ["/%6detrics", "/openapi%2Ejson", "/%64ocs/json", "http://admin.example/metrics"]) {
      expect((await raw(admin, "GET", target)).status, `admin ${target}`).toBe(200);
    }
    expect((await raw(admin, "POST", "/%63onsole/session")).status).toBe(401);
  });

  it("holds its sockets to the public listener's timeouts: one that sends nothing is answered 408 and closed", async () => {
    const server = await start({
      WARDEN_ADMIN_PORT: "0",
      WARDEN_ADMIN_HOST: "127.0.0.1",
      WARDEN_HEADERS_TIMEOUT_MS: "500",
      WARDEN_REQUEST_TIMEOUT_MS: "1000",
    });
    const socket = net.connect(Number(new URL(server.adminUrl as string).port), "127.0.0.1");
    const answer = await new Promise<string>((resolve) => {
      let seen = "";
      socket.on("data", (d) => {
        seen += String(d);
      });
      socket.on("error", () => undefined);
      socket.once("close", () => resolve(seen));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"request_timeout"');
  }, 15_000);

  it("without it, everything answers on the one port", async () => {
    const server = await start({});
    expect(server.adminUrl).toBeUndefined();
    expect(await status(`${server.url}/metrics`)).toBe(200);
  });
});
