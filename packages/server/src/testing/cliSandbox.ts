import fs from "node:fs";
import path from "node:path";
import { afterAll } from "vitest";
import { runCli } from "../cli/main.js";
import { tempDir } from "./harness.js";

/** What one CLI run printed and its exit code, as the binary would give them. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `warden <args>` in this process (runCli, the function bin/warden.js calls), collecting what it
 * prints: a test file of CLI commands then costs no process start per command. `cli.test.ts` keeps
 * a few runs of the real binary.
 */
export async function wardenInProcess(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliRun> {
  return wardenInProcessWith({}, env, ...args);
}

/** `wardenInProcess` with runCli's options (the certificates key directories are checked against). */
export async function wardenInProcessWith(
  options: Parameters<typeof runCli>[3],
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(`${l}\n`), err: (l: string) => err.push(`${l}\n`) };
  const code = await runCli(args, io, env, options);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/**
 * `warden <args>` in this process with `env` over this process's environment, as `wardenCli` runs the
 * binary: resolves what it printed on stdout, rejects on a non-zero exit. For a suite's setup (a
 * tenant, a key), which then costs no process start (a second or more on a busy machine).
 */
export async function wardenCliInProcess(env: Record<string, string>, ...args: string[]): Promise<string> {
  const run = await wardenInProcess({ ...process.env, ...env }, ...args);
  if (run.code !== 0) throw new Error(`warden ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}

/**
 * A throwaway SQLite database for tests of the `warden` CLI: its directory, the environment that
 * points the CLI at it, and a runner resolving {code, stdout, stderr}. Removed after the file.
 */
export function cliSandbox(): {
  dir: string;
  env: NodeJS.ProcessEnv;
  warden: (...args: string[]) => Promise<CliRun>;
} {
  const dir = tempDir();
  const env = {
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "cli.db")}`,
    WARDEN_LOG_LEVEL: "silent",
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, env, warden: (...args) => wardenInProcess(env, ...args) };
}
