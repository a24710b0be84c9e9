// npm run bench: the browser solver in Debian's Chromium. Side by side in one run: hashes per second
// of the naive loop (one crypto.subtle.digest per nonce, the README's old recipe) and of
// @warden/browser's workers, then median and p95 solve times at difficulty 4, 5 and 6.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromiumInstalled, launchChromium } from "./chromium.mjs";
import { wasmKernelBinary } from "./wasmKernel.mjs";

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), "../dist");
const SOLVES = Number(process.env.WARDEN_BENCH_SOLVES ?? 20);
if (!chromiumInstalled()) {
  console.log("solverBench: SKIPPED, Chromium is not installed (apt-get install -y chromium)");
  process.exit(0);
}
// The two kernels for the one-thread comparison: the JavaScript one and its WebAssembly twin.
const kernels = (
  await build({
    entryPoints: [path.join(dist, "../src/powKernel.ts")],
    bundle: true,
    format: "esm",
    write: false,
    minify: true,
  })
).outputFiles[0].text;
const wasm = await wasmKernelBinary();
const page = `<!doctype html><meta charset="utf-8"><script type="module" src="/warden.js"></script>`;
const server = http.createServer((req, res) => {
  if (req.url === "/kernels.js")
    return res.writeHead(200, { "content-type": "text/javascript" }).end(kernels);
  if (req.url === "/pow.wasm") return res.writeHead(200, { "content-type": "application/wasm" }).end(wasm);
  const file = req.url === "/" ? undefined : path.join(dist, path.basename(req.url ?? ""));
  if (!file) return res.writeHead(200, { "content-type": "text/html" }).end(page);
  if (!fs.existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { "content-type": "text/javascript" }).end(fs.readFileSync(file));
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const browser = await launchChromium();
try {
  const p = await browser.newPage();
  await p.goto(`http://127.0.0.1:${server.address().port}/`);
  await p.waitForFunction(() => customElements.get("warden-challenge") !== undefined);
  const naive = await p.evaluate(async () => {
    const seed = "0123456789abcdef0123456789abcdef";
    const enc = new TextEncoder();
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < 4000) {
      await crypto.subtle.digest("SHA-256", enc.encode(seed + n.toString(36)));
      n++;
    }
    return (n * 1000) / (performance.now() - start);
  });
  const tuned = await p.evaluate(async () => {
    const { solveProofOfWork } = await import("/warden.js");
    const controller = new AbortController();
    // Rate over seconds 2 to 6, once the workers' code is optimised (what a solve of more than a
    // second or two runs at).
    let mark;
    let last;
    setTimeout(() => controller.abort(), 6000);
    await solveProofOfWork({
      seed: "0123456789abcdef0123456789abcdef",
      difficulty: 16,
      signal: controller.signal,
      onProgress: (pr) => {
        if (pr.elapsedMs > 2000 && !mark) mark = pr;
        last = pr;
      },
    }).catch(() => undefined);
    const rate = ((last.hashes - mark.hashes) * 1000) / (last.elapsedMs - mark.elapsedMs);
    return { rate, workers: navigator.hardwareConcurrency };
  });
  // One thread each, 3 s after a 1 s warm-up: the JavaScript kernel and the WebAssembly one.
  const oneThread = await p.evaluate(async () => {
    const { searchBlock, hexWordTable } = await import("/kernels.js");
    const { instance } = await WebAssembly.instantiateStreaming(fetch("/pow.wasm"));
    const memory = new Int32Array(instance.exports.memory.buffer);
    memory.set(hexWordTable(), 32);
    const wasmScan = (s, w, _table, from, to, shift) => {
      memory.set(s, 0);
      memory.set(w.subarray(0, 24), 8);
      return instance.exports.scan(from, to, shift);
    };
    const rate = (scan) => {
      const seed = "0123456789abcdef0123456789abcdef";
      let from = 0;
      const run = (ms) => {
        let hashes = 0;
        const start = performance.now();
        while (performance.now() - start < ms) {
          hashes += searchBlock(seed, 16, 1, from, from + 65536, scan).hashes;
          from += 65536;
        }
        return (hashes * 1000) / (performance.now() - start);
      };
      run(1000);
      return run(3000);
    };
    return { js: rate(undefined), wasm: rate(wasmScan) };
  });
  console.log("\nBrowser proof-of-work solver (Chromium, this machine)");
  console.table([
    { solver: "naive crypto.subtle.digest loop", "hashes/s": Math.round(naive) },
    { solver: `@warden/browser (${tuned.workers} workers)`, "hashes/s": Math.round(tuned.rate) },
  ]);
  console.log(`ratio: ${(tuned.rate / naive).toFixed(1)}×`);
  console.table([
    { "kernel, one thread": "JavaScript (generated/powRounds.ts)", "hashes/s": Math.round(oneThread.js) },
    { "kernel, one thread": "WebAssembly (tooling/wasmKernel.mjs)", "hashes/s": Math.round(oneThread.wasm) },
  ]);
  const rows = [];
  for (const difficulty of [4, 5, 6]) {
    const times = await p.evaluate(
      async ({ difficulty, solves }) => {
        const { solveProofOfWork } = await import("/warden.js");
        const out = [];
        for (let i = 0; i < solves; i++) {
          const seed = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
            b.toString(16).padStart(2, "0"),
          ).join("");
          out.push((await solveProofOfWork({ seed, difficulty })).ms);
        }
        return out;
      },
      { difficulty, solves: SOLVES },
    );
    times.sort((a, b) => a - b);
    const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
    rows.push({
      difficulty,
      solves: times.length,
      "median ms": Math.round(at(0.5)),
      "p95 ms": Math.round(at(0.95)),
      "max ms": Math.round(times.at(-1)),
    });
  }
  console.table(rows);
} finally {
  await browser.close();
  server.close();
}
