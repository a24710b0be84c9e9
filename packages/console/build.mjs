// Builds the operator console with esbuild: one ES module (Preact and uPlot bundled in), one style
// sheet (uPlot's and the console's own) and the page that loads both with relative URLs, so the server
// can serve them at /console/ under a strict CSP (script-src 'self'; style-src 'self'): no inline
// script, no <style> element, no style attribute in the HTML. They are written into the server
// package (packages/server/assets/console), which serves them and ships them in its npm package.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "../server/assets/console");
const common = { bundle: true, minify: true, sourcemap: true, logLevel: "warning", target: "es2020" };

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });
await Promise.all([
  build({
    ...common,
    entryPoints: [path.join(here, "src/main.tsx")],
    format: "esm",
    jsx: "automatic",
    jsxImportSource: "preact",
    outfile: path.join(dist, "console.js"),
  }),
  build({
    ...common,
    stdin: {
      // uPlot's sheet first, so the console's rules win where both style the same element.
      contents: '@import "uplot/dist/uPlot.min.css";\n@import "./console.css";\n',
      resolveDir: path.join(here, "src"),
      loader: "css",
      sourcefile: "console-entry.css",
    },
    outfile: path.join(dist, "console.css"),
  }),
]);
fs.copyFileSync(path.join(here, "src/index.html"), path.join(dist, "index.html"));
