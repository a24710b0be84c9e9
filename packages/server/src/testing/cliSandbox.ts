import fs from "node:fs";
import path from "node:path";
import { afterAll } from "vitest";
import { runCli } from "../cli/main.js";
import type { CliRun } from "./wardenProcess.js";

export { type CliRun, stdoutOf } from "./wardenProcess.js";

import { tempDir } from "./harness.js";

/**
 * How tests run the `warden` command: `runWarden` in this process (runCli, the function
 * bin/warden.js calls), which costs no process start per command; `runWardenBinary`
 * (wardenProcess.ts) where the real binary is what the test proves. Both resolve a CliRun;
 * `stdoutOf` (wardenProcess.ts) reads one that must have succeeded (a suite's setup).
 */

/**
 * Runs `warden <args>` in this process with `env` over this process's environment, collecting what
 * it prints; `options` are runCli's (the certificates key directories are checked against, which the
 * binary reads from NODE_EXTRA_CA_CERTS).
 */
export async function runWarden(
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  options: Parameters<typeof runCli>[3] = {},
): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(`${l}\n`), err: (l: string) => err.push(`${l}\n`) };
  const code = await runCli([...args], io, { ...process.env, ...env }, options);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/**
 * A throwaway SQLite database for tests of the `warden` CLI: its directory and the environment that
 * points the CLI at it (this process's, with the database and silent logs). Removed after the file.
 */
export function cliSandbox(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir();
  const env = {
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "cli.db")}`,
    WARDEN_LOG_LEVEL: "silent",
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, env };
}
