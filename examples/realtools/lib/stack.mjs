// The system under measurement, as docs/integration.md sets it up: a real `warden serve` (embedded
// SQLite in a temp dir), the example signup app (examples/signup/app.mjs) behind a trusted proxy, and
// one front door per signup: a TLS-terminating reverse proxy (HTTPS on 127.0.0.1, reached as
// https://localhost:<port>) that computes the client's JA4 TLS fingerprint and passes it on in X-JA4,
// and appends X-Forwarded-For with that signup's own residential address, as a CDN or load balancer
// would, leaving every other header as the client sent it.
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import express from "express";
import { trackClientHellos } from "read-tls-client-hello";
import { createSignupApp } from "../../signup/app.mjs";
import { removeDir } from "./time.mjs";
import { httpsOrigin, LOCALHOST_TLS } from "./tlsFixture.mjs";

const exec = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
export const WARDEN_BIN = path.resolve(here, "../../../packages/server/bin/warden.js");
const TENANT = "realtools";
/**
 * The tenant policy docs/integration.md asks for once the page runs watchPage() (and the example
 * tenant of `npm run example` has): a signup that never ran the page is a program.
 */
export const DEFAULT_POLICY = Object.freeze({ actions: { signup: { requirePage: true } } });
/** The load balancer's address as the app sees it: the only proxy trusted to write X-Forwarded-For and X-JA4. */
const PROXY_NETWORKS = ["127.0.0.1/32"];
/** The header the door writes with the client's JA4 (the app's `ja4Header`), as a CDN's JA4 header. */
export const JA4_HEADER = "x-ja4";
/**
 * TEST ONLY: the JA4 a modelled person's real browser would present (clients/modelJa4.mjs), which
 * Node cannot. Honoured by a door opened for a MODEL class only, never for a bot; always removed.
 */
export const MODEL_JA4_HEADER = "x-realtools-model-ja4";

/** @param {import("node:net").Server} server */
const portOf = (server) => /** @type {import("node:net").AddressInfo} */ (server.address()).port;

/** @param {import("node:net").Server} server @param {number} [port] */
const listen = (server, port = 0) =>
  new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(portOf(server)));
  });

async function freePort() {
  const s = http.createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

/** The client address the door wrote: the last X-Forwarded-For entry. */
const clientOf = (req) => {
  const xff = String(req.headers["x-forwarded-for"] ?? "");
  return xff.split(",").pop()?.trim() || "";
};

/**
 * createSignupApp, wrapped: every answer of /signup and of the challenge routes is recorded per client
 * address (the outcome of each signup is read here, on the app's side, so a person's browser needs no
 * automation protocol), next to the app's own accounts map.
 */
export function createRecordedSignupApp(settings) {
  const inner = createSignupApp(settings);
  /** @type {Map<string, { path: string, status: number, code?: string, degraded?: boolean, eventId?: string, ticket?: string, behaviour?: Record<string, number>, at: number }[]>} */
  const answers = new Map();
  const app = express();
  app.disable("x-powered-by");
  app.use((req, res, next) => {
    if (req.method === "POST" && (req.path === "/signup" || req.path.startsWith("/warden/challenge/"))) {
      const client = clientOf(req);
      const json = res.json;
      res.json = function recorded(body) {
        const list = answers.get(client) ?? [];
        list.push({
          path: req.path,
          status: res.statusCode,
          code: body?.code,
          degraded: body?.degraded,
          eventId: body?.eventId,
          ticket: body?.ticket,
          // The page's counts as the client sent them (read after the app parsed the body): what a
          // person's page reported is what the careful HTTP clients copy (lib/pageEvidence.mjs).
          behaviour: req.path === "/signup" ? req.body?.wardenPage?.behaviour : undefined,
          at: Date.now(),
        });
        answers.set(client, list);
        return json.call(this, body);
      };
    }
    next();
  });
  app.use(inner.app);
  return { app, accounts: inner.accounts, answers };
}

/**
 * A front door for one client address: terminates TLS (HTTP/1.1 only in ALPN; the JA4 records what
 * the client offered, h2 included) and forwards every request to the app over plain HTTP with the
 * client's headers in the order and case received, without any X-JA4 or model header it sent, then
 * X-Forwarded-For and X-JA4 appended last. `paths` lists what was asked; `ja4` the JA4 values passed
 * to the app, `tlsJa4` those computed from the client's ClientHellos (they differ only for a model).
 * @param {number} appPort
 * @param {string} address
 * @param {http.Agent} agent
 * @param {{ modelJa4?: boolean, ja4?: boolean }} [opts] modelJa4: a MODEL class's door, which honours
 *   MODEL_JA4_HEADER; ja4: false makes it a plain reverse proxy that passes no JA4 to the app (the
 *   JA4 is still computed, for the report)
 */
export async function openDoor(appPort, address, agent, { modelJa4 = false, ja4: passJa4 = true } = {}) {
  /** @type {string[]} */
  const paths = [];
  /** @type {Set<string>} */
  const ja4 = new Set();
  /** @type {Set<string>} */
  const tlsJa4 = new Set();
  const server = https.createServer({ ...LOCALHOST_TLS, ALPNProtocols: ["http/1.1"] }, (req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const computed = /** @type {any} */ (req.socket).tlsClientHello?.ja4;
    /** @type {string[]} */
    const headers = [];
    let declared = "";
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = /** @type {string} */ (req.rawHeaders[i]);
      const lower = name.toLowerCase();
      if (lower === MODEL_JA4_HEADER) declared = String(req.rawHeaders[i + 1] ?? "");
      if (lower === JA4_HEADER || lower === MODEL_JA4_HEADER) continue;
      headers.push(name, /** @type {string} */ (req.rawHeaders[i + 1]));
    }
    const presented = modelJa4 && declared ? declared : computed;
    tlsJa4.add(computed ?? "(none)");
    ja4.add(passJa4 ? (presented ?? "(none)") : "(not passed)");
    headers.push("X-Forwarded-For", address);
    if (presented && passJa4) headers.push(JA4_HEADER, presented);
    const up = http.request(
      { host: "127.0.0.1", port: appPort, method: req.method, path: req.url, headers, setHost: false, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  trackClientHellos(server);
  const port = await listen(server);
  return {
    url: httpsOrigin(port),
    address,
    paths,
    ja4,
    tlsJa4,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Starts Warden and the recorded app; everything lives in `tempRoot` (removed by close()).
 * @param {{ tempRoot: string, policy?: unknown, log?: (line: string) => void }} opts
 *   policy: the tenant policy document (docs/api.md) to set before serving; default DEFAULT_POLICY.
 */
export async function startStack({ tempRoot, policy = DEFAULT_POLICY, log = () => {} }) {
  const dataDir = fs.mkdtempSync(path.join(tempRoot, "warden-"));
  const port = await freePort();
  const env = {
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${path.join(dataDir, "warden.db")}`,
    WARDEN_DEGRADED_SPOOL_DIR: path.join(dataDir, "spool"),
    WARDEN_LOG_LEVEL: "warn",
    // Verify's deadline at its ceiling: browsers share this machine's cores with the server, and a
    // verify past its deadline answers the degraded challenge, which is not what is measured here
    // (degraded first answers are still counted and shown).
    WARDEN_VERIFY_DEADLINE_MS: "45",
    WARDEN_RATE_LIMIT_MAX: "1000000",
    HOST: "127.0.0.1",
    PORT: String(port),
  };
  await exec(process.execPath, [WARDEN_BIN, "tenant", "create", TENANT], { env });
  if (policy !== null) {
    const file = path.join(dataDir, "policy.json");
    fs.writeFileSync(file, JSON.stringify(policy));
    await exec(process.execPath, [WARDEN_BIN, "policy", "set", "--tenant", TENANT, "--file", file], { env });
  }
  const { stdout } = await exec(
    process.execPath,
    [
      WARDEN_BIN,
      "key",
      "create",
      "--tenant",
      TENANT,
      "--scopes",
      "verify:write,challenge:write,ledger:read,feedback:write",
      "--json",
    ],
    { env },
  );
  const apiKey = JSON.parse(stdout).apiKey;
  // The operator's own key, as the console's session holds it: reads the ledger, writes deny rules.
  const operator = await exec(
    process.execPath,
    [WARDEN_BIN, "key", "create", "--tenant", TENANT, "--scopes", "ledger:read,policy:write", "--json"],
    { env },
  );
  const operatorKey = JSON.parse(operator.stdout).apiKey;
  const wardenUrl = `http://127.0.0.1:${port}`;
  let output = "";
  /** Starts `warden serve` and waits until it is ready. */
  const serve = async () => {
    const child = spawn(process.execPath, [WARDEN_BIN, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    for (let i = 0; ; i++) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`warden serve exited (${child.signalCode ?? child.exitCode}):\n${output}`);
      }
      try {
        if ((await fetch(`${wardenUrl}/readyz`)).status === 200) return child;
      } catch {
        // not listening yet
      }
      if (i > 300) throw new Error(`warden serve was not ready in 30 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  let child = await serve();
  log(`warden serve on ${wardenUrl}`);
  const recorded = createRecordedSignupApp({
    wardenUrl,
    apiKey,
    tenantId: TENANT,
    ticketSecret: randomBytes(32).toString("base64url"),
    trustedProxies: PROXY_NETWORKS,
    ja4Header: JA4_HEADER,
    verifyTimeoutMs: 5000,
  });
  const appServer = http.createServer(recorded.app);
  const appPort = await listen(appServer);
  const agent = new http.Agent({ keepAlive: true });
  const doors = new Set();
  return {
    wardenUrl,
    appUrl: `http://127.0.0.1:${appPort}`,
    accounts: recorded.accounts,
    answers: recorded.answers,
    /**
     * A door for one signup, with its own client address; `modelJa4` only for a MODEL class (the
     * door then passes on the JA4 the model declares for the browser it stands for).
     * @param {string} address
     * @param {{ modelJa4?: boolean, ja4?: boolean }} [opts]
     */
    async door(address, opts) {
      const d = await openDoor(appPort, address, agent, opts);
      doors.add(d);
      return d;
    },
    /** One event as Warden recorded it (actor type, reasons), read with the key's ledger:read scope. */
    async event(eventId) {
      const res = await fetch(`${wardenUrl}/v1/events/${encodeURIComponent(eventId)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      if (!res.ok) return undefined;
      const body = await res.json();
      return body.event ?? body;
    },
    /**
     * Posts one feedback observation on an event (as an app's abuse desk would), with an idempotency
     * key so a retry is stored once; resolves the answer's status.
     * @param {string} eventId
     * @param {string} outcome
     */
    async feedback(eventId, outcome, source = "trust_queue") {
      const res = await fetch(`${wardenUrl}/v1/feedback`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": "application/json",
          "idempotency-key": `realtools-${outcome}-${eventId}`,
        },
        body: JSON.stringify({ eventId, outcome, source }),
      });
      await res.arrayBuffer();
      return res.status;
    },
    /**
     * The operator's one action on the console's Campaigns page, after accounts were reported: of the
     * marks that every reported attempt shares, that a deny list takes and that no attempt with a good
     * label bears, the one the fewest other attempts bear (its what-if read before applying), turned
     * into a deny rule as the page's button does. Resolves what was applied, or why nothing was.
     * @param {{ since: string, reported: number }} o
     */
    async denySharedMark({ since, reported }) {
      const headers = { authorization: `Bearer ${operatorKey}` };
      const until = new Date(Date.now() + 1000).toISOString();
      const res = await fetch(
        `${wardenUrl}/v1/stats/campaigns?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}&limit=50`,
        { headers },
      );
      if (!res.ok) return { applied: false, why: `campaigns: ${res.status} ${await res.text()}` };
      /** @type {{ rows: { kind: string, value: string, labelled: number, unlabelled: number, good: number, list: string | null, listed: boolean }[], policyVersion: string }} */
      const page = await res.json();
      // The narrowest rule that covers them: of the marks every reported attempt shares, the one the
      // fewest other attempts bear (a browser's user agent is shared by its people; one machine's
      // environment is not), the most specific kind first on a tie.
      const specific = ["environment", "tls", "userAgent", "emailDomain", "network"];
      const [row] = page.rows
        .filter((r) => r.list && !r.listed && r.labelled >= reported && r.good === 0)
        .sort((a, b) => a.unlabelled - b.unlabelled || specific.indexOf(a.kind) - specific.indexOf(b.kind));
      if (!row)
        return { applied: false, why: "no mark shared by every reported attempt that a deny list takes" };
      const list = /** @type {string} */ (row.list);
      const whatIf = await fetch(
        `${wardenUrl}/v1/stats/what-if-rule?list=${list}&value=${encodeURIComponent(row.value)}`,
        { headers },
      );
      const preview = whatIf.ok ? await whatIf.json() : undefined;
      if (preview && preview.good > 0)
        return { applied: false, why: `${list} would turn away ${preview.good} good` };
      const applied = await fetch(`${wardenUrl}/v1/policy/deny`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({
          list,
          value: row.value,
          basedOn: preview?.policyVersion ?? page.policyVersion,
        }),
      });
      if (!applied.ok) return { applied: false, why: `deny: ${applied.status} ${await applied.text()}` };
      return { applied: true, list, value: row.value, kind: row.kind, wouldMatch: preview?.events };
    },
    /** The first event recorded at or after `since` (ISO date-time): a signup's first verify, when signups run one at a time. */
    async firstEventSince(since) {
      const res = await fetch(`${wardenUrl}/v1/events?since=${encodeURIComponent(since)}&limit=50`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      if (!res.ok) return undefined;
      const { items } = await res.json();
      const first = [...items].sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
      return first ? this.event(first.eventId) : undefined;
    },
    output: () => output,
    /**
     * When the Warden process is gone (killed from outside, or crashed), says why and starts it again
     * on the same store and port; resolves the reason, or undefined when it was running.
     */
    async reviveWarden() {
      if (child.exitCode === null && child.signalCode === null) return undefined;
      const why = `warden serve ended (${child.signalCode ?? `exit ${child.exitCode}`}); last output: ${output
        .trim()
        .split("\n")
        .slice(-3)
        .join(" | ")}`;
      child.stdout.destroy();
      child.stderr.destroy();
      child = await serve();
      return why;
    },
    async close() {
      for (const d of doors) await d.close();
      agent.destroy();
      appServer.closeAllConnections();
      await new Promise((r) => appServer.close(r));
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      child.stdout.destroy();
      child.stderr.destroy();
      await removeDir(dataDir);
    },
  };
}

/** The eventId a ticket was signed for (its payload is base64url JSON; the signature is not checked). */
export function ticketEventId(ticket) {
  try {
    return JSON.parse(Buffer.from(String(ticket).split(".")[1] ?? "", "base64url").toString()).eventId;
  } catch {
    return undefined;
  }
}

export const newTempRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), "warden-realtools-"));
