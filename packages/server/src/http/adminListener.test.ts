import fs from "node:fs";
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

  it("without it, everything answers on the one port", async () => {
    const server = await start({});
    expect(server.adminUrl).toBeUndefined();
    expect(await status(`${server.url}/metrics`)).toBe(200);
  });
});
