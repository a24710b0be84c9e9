/** Real `warden` processes for the many-process tests and the scale-out bench. */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);
export const WARDEN_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/warden.js");

/** A free loopback port (asked of the OS, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface WardenProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then waits for the exit code. */
  stop(): Promise<number | null>;
}

/** How `warden` is run: this repository's bin by default, or an installed one (the packages test). */
export interface WardenLaunch {
  command: string;
  args: string[];
  cwd?: string;
}

const REPOSITORY_WARDEN: WardenLaunch = { command: process.execPath, args: [WARDEN_BIN] };

/**
 * Starts a real `warden serve` (with `args`, e.g. `--workers 2`) on a free port and waits until
 * /readyz answers 200 (with workers: until one of them does).
 */
export async function startWarden(
  env: Record<string, string>,
  readyTimeoutMs = 20_000,
  args: string[] = [],
  launch: WardenLaunch = REPOSITORY_WARDEN,
): Promise<WardenProcess> {
  const port = await freePort();
  // A spool of its own unless the caller shares one: processes of other suites must not take its events.
  const spool = env.WARDEN_DEGRADED_SPOOL_DIR ?? mkdtempSync(path.join(os.tmpdir(), "warden-spool-"));
  const child = spawn(launch.command, [...launch.args, "serve", ...args], {
    ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }),
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      WARDEN_DEGRADED_SPOOL_DIR: spool,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`warden serve exited with ${child.exitCode}:\n${out}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`warden serve was not ready within ${readyTimeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/**
 * Starts one `warden serve` per environment at once, resolved in their order. When one fails to
 * start, those that did are killed before the failure is thrown: none outlives the test.
 */
export async function startWardens(
  envs: readonly Record<string, string>[],
  readyTimeoutMs?: number,
): Promise<WardenProcess[]> {
  const starts = await Promise.allSettled(envs.map((env) => startWarden(env, readyTimeoutMs)));
  const failed = starts.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (!failed) return starts.map((s) => (s as PromiseFulfilledResult<WardenProcess>).value);
  for (const s of starts) if (s.status === "fulfilled") s.value.child.kill("SIGKILL");
  throw failed.reason;
}

/** Runs the real `warden` CLI with `env`; rejects on a non-zero exit. */
export async function wardenCli(env: Record<string, string>, ...args: string[]): Promise<string> {
  const { stdout } = await exec(process.execPath, [WARDEN_BIN, ...args], { env: { ...process.env, ...env } });
  return stdout;
}

/**
 * A `warden serve` (with `args`) expected not to start: resolves its exit code, how long it took and
 * its stderr (killed after 30 s: a process that neither listens nor exits is the failure such tests
 * look for).
 */
export function serveUntilExit(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; ms: number; stderr: string }> {
  const started = Date.now();
  const child = spawn(process.execPath, [WARDEN_BIN, "serve", ...args], {
    env: { ...process.env, WARDEN_LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += String(d);
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(killer);
      resolve({ code, ms: Date.now() - started, stderr });
    }),
  );
}

/** Every scope a test key usually needs. */
export const ALL_TEST_SCOPES = "verify:write,challenge:write,feedback:write,ledger:read";

/** A new API key of `tenant` made with the real CLI (`warden key create --json`). */
export async function createKey(
  env: Record<string, string>,
  tenant: string,
  scopes: string = ALL_TEST_SCOPES,
  cli: (env: Record<string, string>, ...args: string[]) => Promise<string> = wardenCli,
): Promise<string> {
  const out = await cli(env, "key", "create", "--tenant", tenant, "--scopes", scopes, "--json");
  return (JSON.parse(out) as { apiKey: string }).apiKey;
}

/** Runs the real `warden` CLI and resolves its exit code and output instead of throwing. */
export async function runWarden(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [WARDEN_BIN, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
