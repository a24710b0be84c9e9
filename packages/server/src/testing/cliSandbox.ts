import fs from "node:fs";
import path from "node:path";
import { afterAll } from "vitest";
import { runWarden } from "../lib/wardenProcess.js";
import { tempDir } from "./harness.js";

/**
 * A throwaway SQLite database for tests of the real `warden` binary: its directory, the environment
 * that points the CLI at it, and a runner resolving {code, stdout, stderr}. Removed after the file.
 */
export function cliSandbox(): {
  dir: string;
  env: NodeJS.ProcessEnv;
  warden: (...args: string[]) => ReturnType<typeof runWarden>;
} {
  const dir = tempDir();
  const env = {
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "cli.db")}`,
    WARDEN_LOG_LEVEL: "silent",
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, env, warden: (...args) => runWarden(env, ...args) };
}
