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

/** Starts one of benchServers.js's servers in its own process; resolves once it prints its address. */
export function startBenchServer(
  mode: "verify" | "minimal",
  env: NodeJS.ProcessEnv = process.env,
): Promise<BenchServer> {
  const child = spawn(process.execPath, [path.join(here, "benchServers.js"), mode], {
    stdio: ["ignore", "pipe", "inherit"],
    env,
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        const { url, apiKey } = JSON.parse(line) as { url: string; apiKey: string };
        resolve({ name: mode, child, url, apiKey });
      }
    });
    child.once("exit", (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
}
