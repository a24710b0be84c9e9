// The headers of a real Chromium request of the page, captured once per run from Debian's Chromium
// run as a person runs it (plain process, no automation protocol, headful on this run's display): a
// navigation to the page, and the page's own fetch POST of a JSON body, as examples/signup sends it.
import http from "node:http";
import { launchPersonChromium } from "./chromiumProcess.mjs";
import { withTimeout } from "./time.mjs";

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>capture</title>
<script type="module" src="/capture.js"></script></head><body><p>capture</p></body></html>`;
const SCRIPT = `fetch("/signup", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "a@b.c" }) });`;

/** rawHeaders as [name, value] pairs. */
const pairs = (raw) => {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i], raw[i + 1]]);
  return out;
};

/**
 * @param {{ env: NodeJS.ProcessEnv, tempRoot: string }} opts
 * @returns {Promise<{ navigate: [string, string][], fetch: [string, string][] }>}
 */
export async function captureChromiumHeaders({ env, tempRoot }) {
  /** @type {{ navigate?: [string, string][], fetch?: [string, string][] }} */
  const got = {};
  let done;
  const finished = new Promise((r) => {
    done = r;
  });
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/") {
      got.navigate ??= pairs(req.rawHeaders);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
    } else if (req.url === "/capture.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(SCRIPT);
    } else if (req.method === "POST" && req.url === "/signup") {
      got.fetch ??= pairs(req.rawHeaders);
      req.resume();
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      done();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await launchPersonChromium({ url, env, tempRoot });
  try {
    await withTimeout(finished, 30_000, "Chromium sent no request to the capture page in 30 s");
  } finally {
    await browser.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  if (!got.navigate || !got.fetch) throw new Error("capture incomplete");
  return { navigate: got.navigate, fetch: got.fetch };
}
