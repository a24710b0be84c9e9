import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

export interface BenchServer {
  name: string;
  child: ChildProcess;
  url: string;
  apiKey: string;
}

/**
 * Runs `script` with `args` in a process of its own (with an IPC channel when asked, for a bench
 * that sends its server messages); resolves once it prints its address and API key as one JSON line.
 */
export function startServerProcess(
  name: string,
  script: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; ipc?: boolean } = {},
): Promise<BenchServer> {
  const child = spawn(process.execPath, [script, ...args], {
    stdio: options.ipc ? ["ignore", "pipe", "inherit", "ipc"] : ["ignore", "pipe", "inherit"],
    env: options.env ?? process.env,
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        const { url, apiKey } = JSON.parse(line) as { url: string; apiKey: string };
        resolve({ name, child, url, apiKey });
      }
    });
    child.once("exit", (code) => reject(new Error(`${name} server exited with ${code}`)));
  });
}

/** Starts one of benchServers.js's servers in its own process; resolves once it prints its address. */
export function startBenchServer(
  mode: "verify" | "minimal",
  env: NodeJS.ProcessEnv = process.env,
): Promise<BenchServer> {
  return startServerProcess(mode, path.join(here, "benchServers.js"), [mode], { env });
}
