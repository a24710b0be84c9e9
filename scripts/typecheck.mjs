// `npm run typecheck`: every package's strict type-check (tsconfig.check.json, sources and tests), as
// many at once as there are cores (two at least), each one's output printed whole when it ends;
// exits 1 if any fails. Incremental: each check keeps what it learnt in node_modules/.cache/warden, so a
// second run checks only what changed (23 s cold, 8.5 s warm on one machine).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
// The server's check is the longest: it starts first, then the tools' (the benches and the evaluation,
// with the server's sources they import). Then the examples each framework's guide points to, against
// the workspace's built packages (their own strict tsconfig, nothing emitted).
// examples/nextjs is no workspace (Next.js's optional image optimiser would install LGPL binaries
// for every developer): its end-to-end test installs it outside the repository, where `next build`
// type-checks it strictly.
const packages = [
  "server",
  "tools",
  "client",
  "console",
  "browser",
  ...["express", "fastify", "hono"].map((name) => `examples/${name}`),
];
const projectOf = (name) =>
  name.startsWith("examples/") ? [name, "--noEmit"] : [`packages/${name}/tsconfig.check.json`];
const slots = Math.max(2, Math.min(packages.length, availableParallelism()));

const check = (name) =>
  new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [tsc, "-p", ...projectOf(name)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(output);
      if (code !== 0) process.stderr.write(`typecheck: ${name} failed (exit ${code}, ${seconds} s)\n`);
      resolve(code === 0);
    });
  });

const queue = [...packages];
const results = await Promise.all(
  Array.from({ length: slots }, async () => {
    let ok = true;
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) ok = (await check(name)) && ok;
    return ok;
  }),
);
process.exitCode = results.every(Boolean) ? 0 : 1;
