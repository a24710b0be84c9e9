// Where a person would point: the page's fields and buttons in screen coordinates, measured once per
// run in a separate Chromium window started exactly as the person's (same flags, same window size and
// position, a fresh profile), on a copy of the app's page with one measuring script added. The
// person's own browser is never instrumented. The Verify button is measured where the page puts it
// when a signup is challenged (examples/signup/public/signup.js: the element in #challenge, Sign up hidden).
import http from "node:http";
import { launchPersonChromium } from "./chromiumProcess.mjs";
import { withTimeout } from "./time.mjs";

const MEASURE = `
const box = (el) => { const r = el?.getBoundingClientRect(); return r && r.width > 0 ? { x: r.x, y: r.y, w: r.width, h: r.height } : null; };
const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
for (let i = 0; i < 200 && document.body.dataset.ready !== "true"; i++) await new Promise((r) => setTimeout(r, 50));
await frame();
const report = { email: box(document.querySelector("#email")), name: box(document.querySelector("#name")), submit: box(document.querySelector("#submit")) };
await customElements.whenDefined("warden-challenge");
const element = document.createElement("warden-challenge");
element.setAttribute("ticket", "calibration");
(document.getElementById("challenge") ?? document.querySelector("form")).replaceChildren(element);
const submit = document.querySelector("#submit");
if (submit) submit.hidden = true;
await frame();
report.verify = box((element.shadowRoot ?? element).querySelector("button:not([hidden])"));
report.window = { screenX, screenY, outerWidth, outerHeight, innerWidth, innerHeight, dpr: devicePixelRatio };
await fetch("/__report", { method: "POST", body: JSON.stringify(report) });
`;

/**
 * @param {{ env: NodeJS.ProcessEnv, tempRoot: string, appUrl: string, extraArgs?: string[] | ((profile: string) => string[]), typeUrl?: boolean }} opts
 * @returns {Promise<Record<"email" | "name" | "submit" | "verify", { x: number, y: number, w: number, h: number }>>} screen boxes
 */
export async function calibrate({ env, tempRoot, appUrl, extraArgs = [], typeUrl = false }) {
  const html = await (await fetch(`${appUrl}/`)).text();
  const page = html.replace("</body>", '<script type="module" src="/__measure.js"></script></body>');
  let resolveReport;
  const reported = new Promise((r) => {
    resolveReport = r;
  });
  const server = http.createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    } else if (req.url === "/__measure.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(MEASURE);
    } else if (req.method === "POST" && req.url === "/__report") {
      let body = "";
      for await (const chunk of req) body += chunk;
      res.writeHead(204).end();
      resolveReport(JSON.parse(body));
    } else if (req.method === "GET") {
      // The page's own files (stylesheet, scripts) from the app itself.
      const answer = await fetch(`${appUrl}${req.url}`);
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
      res.end(Buffer.from(await answer.arrayBuffer()));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const browser = await launchPersonChromium({
    url: `http://127.0.0.1:${server.address().port}/`,
    env,
    tempRoot,
    extraArgs,
    typeUrl,
  });
  let report;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        report = await withTimeout(reported, typeUrl ? 12_000 : 30_000, "calibration: no report in 30 s");
        break;
      } catch (err) {
        if (!typeUrl || attempt === 2) throw err;
        await browser.retype();
      }
    }
  } finally {
    await browser.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  const w = report.window;
  // The page's viewport sits below the browser's toolbars, at the window's left edge.
  const left = w.screenX + (w.outerWidth - w.innerWidth) / 2;
  const top = w.screenY + (w.outerHeight - w.innerHeight);
  const onScreen = (b, name) => {
    if (!b) throw new Error(`calibration: the page has no visible ${name}`);
    return { x: left + b.x * w.dpr, y: top + b.y * w.dpr, w: b.w * w.dpr, h: b.h * w.dpr };
  };
  return {
    email: onScreen(report.email, "#email"),
    name: onScreen(report.name, "#name"),
    submit: onScreen(report.submit, "#submit"),
    verify: onScreen(report.verify, "warden-challenge button"),
  };
}
