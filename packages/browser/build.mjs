// Builds the browser package with esbuild: an ES module, a script-tag (IIFE) build and the classic
// worker script both load. No eval and no inline script, so a strict CSP (script-src 'self';
// worker-src 'self') is enough. TypeScript then writes the declarations (dist/types) for apps that
// import the module.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const common = { bundle: true, target: "es2020", minify: true, sourcemap: true, logLevel: "warning" };
await Promise.all([
  build({
    ...common,
    entryPoints: [path.join(here, "src/index.ts")],
    format: "esm",
    outfile: path.join(here, "dist/warden.js"),
  }),
  build({
    ...common,
    entryPoints: [path.join(here, "src/index.ts")],
    format: "iife",
    globalName: "WardenBrowser",
    // import.meta is empty in a script; the entry then finds its URL from document.currentScript.
    logOverride: { "empty-import-meta": "silent" },
    outfile: path.join(here, "dist/warden.iife.js"),
  }),
  build({
    ...common,
    entryPoints: [path.join(here, "src/powWorker.ts")],
    format: "iife",
    outfile: path.join(here, "dist/warden-pow-worker.js"),
  }),
]);
execFileSync(process.execPath, [createRequire(import.meta.url).resolve("typescript/bin/tsc"), "-p", here], {
  stdio: "inherit",
});
