// 11. curl_cffi (PyPI), Python's most used TLS-impersonating client (curl-impersonate's libcurl):
// its newest Chrome, Firefox and Safari (macOS) profiles, a fresh Session per signup, driven from
// Node through clients/curl_cffi_bridge.py in a venv of the run's own (lib/python.mjs). The flow is
// impit's: the page with the profile's headers, the page's scripts and fetch() calls with that
// browser's headers for them, a person's pace and a real person's page counts; PoW in Node.
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { httpSignup, parseJson } from "../lib/httpFlow.mjs";
import { pageRequestHeaders } from "../lib/impersonation.mjs";
import { carefulPageFields } from "../lib/pageEvidence.mjs";
import { pythonTools } from "../lib/python.mjs";

const BRIDGE = path.join(path.dirname(fileURLToPath(import.meta.url)), "curl_cffi_bridge.py");

/** One bridge process: `call(message)` resolves its answer line. */
function startBridge(python, env) {
  const child = spawn(python, [BRIDGE], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-2000);
  });
  /** @type {Map<number, (answer: any) => void>} */
  const waiting = new Map();
  let next = 0;
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const answer = JSON.parse(line);
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  child.on("exit", (code) => {
    for (const resolve of waiting.values())
      resolve({ error: `curl_cffi bridge exited (${code}): ${stderr}` });
    waiting.clear();
  });
  return {
    /** @param {Record<string, unknown>} message */
    call(message) {
      const id = ++next;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ ...message, id })}\n`);
      });
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      await exited;
    },
  };
}

/** @param {string} impersonate @param {import("../lib/impersonation.mjs").Family} family @param {string} title @returns {import("./types.mjs").ClientClass} */
const profile = (impersonate, family, title) => ({
  id: `curl-cffi-${impersonate}`,
  label: `curl_cffi 0.16.3 (Python), ${title}, the page's requests, PoW in Node`,
  group: "bots",
  needs: [],
  async start(ctx) {
    const python = await pythonTools(ctx.tempRoot);
    const bridge = startBridge(python, ctx.browserEnv);
    return {
      async signup(door, identity) {
        const opened = await bridge.call({ op: "session", impersonate });
        if (opened.error) throw new Error(opened.error);
        /** @type {import("../lib/httpFlow.mjs").Send} */
        const send = async (req) => {
          const answer = await bridge.call({
            op: "request",
            session: opened.id,
            method: req.method,
            url: door.url + req.path,
            headers: pageRequestHeaders(family, req, door.url),
            ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
          });
          if (answer.error) throw new Error(answer.error);
          return { status: answer.status, text: answer.text, json: parseJson(answer.text) };
        };
        try {
          return await httpSignup(send, identity, {
            pageFields: carefulPageFields,
            personBehaviours: ctx.personBehaviours,
          });
        } finally {
          await bridge.call({ op: "close", session: opened.id });
        }
      },
      close: () => bridge.close(),
    };
  },
});

/** @type {import("./types.mjs").ClientClass[]} */
export const clients = [
  profile("chrome", "chrome", "impersonate chrome (its newest Chrome)"),
  profile("firefox", "firefox", "impersonate firefox (its newest Firefox)"),
  profile("safari", "safari", "impersonate safari (its newest Safari, macOS)"),
];
