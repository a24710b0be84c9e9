import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "./testing/harness.js";

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../bin/warden.js");
const dir = tempDir();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Starts `warden serve --demo` (as `npm start` does) on a free port; resolves once it prints its first-run banner or listens. */
function startServe(port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [bin, "serve", "--demo"], {
    env: {
      ...process.env,
      WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "serve.db")}`,
      WARDEN_DEGRADED_SPOOL_DIR: path.join(dir, "spool"),
      PORT: String(port),
      WARDEN_LOG_LEVEL: "info",
    },
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 15_000);
    const check = setInterval(() => {
      if (out.includes("Server listening")) {
        clearInterval(check);
        clearTimeout(timer);
        // The banner follows the listen line.
        setTimeout(() => resolve({ child, output: () => out }), 200);
      }
    }, 20);
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.kill("SIGTERM");
  });
}

describe("warden serve", () => {
  it("on an empty database creates the demo tenant and prints one working key, once; SIGTERM exits 0", async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const first = await startServe(port);
    const key = /wdn_[A-Za-z0-9_-]{43}/.exec(first.output())?.[0];
    expect(key).toBeDefined();
    expect(first.output()).toMatch(/created tenant 'demo'/);
    // Warmed up before listening; the rehearsal's requests are neither logged nor counted.
    const beforeListen = first.output().split("Server listening")[0] ?? "";
    expect(beforeListen).toMatch(/"rehearsed":32,.*"msg":"store connections opened and verify rehearsed"/);
    expect(beforeListen).not.toContain("request completed");
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).not.toMatch(/^warden_verify_decisions_total\{/m);
    expect(metrics).not.toMatch(/^warden_http_requests_total\{route="\/v1\/verify"/m);

    const res = await fetch(`http://127.0.0.1:${port}/v1/verify`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ action: "signup", subject: { userAgent: "curl/8.5.0" } }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { decision: string }).decision).toBe("challenge");
    expect(first.output()).not.toContain(`"${key}"`);
    expect(await stop(first.child)).toBe(0);
    // The last line says the drain is over, for whoever reads the log of a stop.
    expect(first.output().trim().split("\n").at(-1)).toMatch(/"msg":"stopped: requests finished/);

    const second = await startServe(port);
    expect(second.output()).not.toMatch(/wdn_/);
    // No key again, but how to make one (printed just after the listen line).
    const hint = /Tenant 'demo' exists: .*\n {2}npx warden key create --tenant demo --scopes /;
    for (let i = 0; i < 50 && !hint.test(second.output()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(second.output()).toMatch(hint);
    expect(await stop(second.child)).toBe(0);
  }, 40_000);
});
