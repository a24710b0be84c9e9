/** Real `warden` processes for the many-process tests and the scale-out bench. */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
// The server as the tools import it: the benches run this helper built (tsconfig.testing.json), where
// a relative import would name a module dist-testing/ does not hold. Vitest and the typecheck read it
// as ../config.ts.
import { loadConfig } from "@warden/server/dist/config.js";

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
  /**
   * SIGTERM, then waits for the exit code: null when the process was still running after the stop
   * timeout the deploy files give a supervisor (stopTimeoutMs) and was killed with SIGKILL, as
   * systemd or Docker would kill it.
   */
  stop(): Promise<number | null>;
}

/**
 * How long a supervisor waits for a stopping `warden serve` before SIGKILL: the shutdown grace
 * period, then 5 s for the degraded events and a margin (deploy/warden.service's TimeoutStopSec and
 * compose's stop_grace_period, which deployFiles.test.ts holds to at least this).
 */
function stopTimeoutMs(env: Record<string, string | undefined>): number {
  const grace = env.WARDEN_SHUTDOWN_GRACE_MS;
  return loadConfig(grace === undefined ? {} : { WARDEN_SHUTDOWN_GRACE_MS: grace }).shutdownGraceMs + 20_000;
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
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs({ ...process.env, ...env }));
      try {
        return await exited;
      } finally {
        clearTimeout(killer);
      }
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

/** What one CLI run printed and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a run that must have succeeded printed on stdout; throws with its stderr otherwise. */
export function stdoutOf(run: CliRun): string {
  if (run.code !== 0) throw new Error(`warden exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}

/** Runs the real `warden` binary with `env` over this process's environment; never rejects on its exit. */
export async function runWardenBinary(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [WARDEN_BIN, ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** What the real `warden` binary printed (`env` over this process's); rejects on a non-zero exit. */
export async function wardenCli(env: Record<string, string>, ...args: string[]): Promise<string> {
  return stdoutOf(await runWardenBinary(env, args));
}

/** How long serveUntilExit waits for a `warden serve` that should fail to start before SIGKILL. */
const FAILED_START_BOUND_MS = 30_000;

/**
 * A `warden serve` (with `args`) expected not to start: resolves its exit code and its stderr. Killed
 * after FAILED_START_BOUND_MS (code null, signal SIGKILL): a process that neither listens nor exits
 * is the failure such tests look for, and one that exits by itself has a code.
 */
export function serveUntilExit(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [WARDEN_BIN, "serve", ...args], {
    env: { ...process.env, WARDEN_LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += String(d);
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), FAILED_START_BOUND_MS);
  return new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stderr });
    }),
  );
}

/** Every scope a test key usually needs. */
export const ALL_TEST_SCOPES = "verify:write,challenge:write,feedback:write,ledger:read";

/**
 * A new API key of `tenant` made with the CLI (`warden key create --json`): run by `run`, the real
 * binary unless a test runs it in its own process.
 */
export async function createKey(
  env: Record<string, string>,
  tenant: string,
  scopes: string = ALL_TEST_SCOPES,
  run: (env: NodeJS.ProcessEnv, args: readonly string[]) => Promise<CliRun> = runWardenBinary,
): Promise<string> {
  const args = ["key", "create", "--tenant", tenant, "--scopes", scopes, "--json"];
  const out = stdoutOf(await run(env, args));
  return (JSON.parse(out) as { apiKey: string }).apiKey;
}
