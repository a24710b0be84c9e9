import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { issueApiKey } from "@warden/server/dist/admin/apiKeys.js";
import { buildApp } from "@warden/server/dist/app.js";
import { loadConfig } from "@warden/server/dist/config.js";
import { buildDeps, closeDeps } from "@warden/server/dist/deps.js";
import { compilePolicy } from "@warden/server/dist/policy/tenantPolicy.js";
import { parseAgentJwks } from "@warden/server/dist/webBotAuth/agentKeys.js";
import type { AgentOperator } from "./trafficGenerator.js";

/**
 * The eval tenant's policy, as docs/api.md recommends for browser forms: page evidence required on the
 * actions whose pages run watchPage (signup, trial_activation, demo_request). Not tenant-wide: api_key
 * is called by API clients and agents, and the native apps' signups are their own actions
 * (app_signup, app_trial_activation): an app has no page, so an action that apps post to must not
 * require one (a tenant whose apps share the web form's action sets that action's requirePage false).
 */
export const EVAL_POLICY = {
  actions: {
    signup: { requirePage: true },
    trial_activation: { requirePage: true },
    demo_request: { requirePage: true },
  },
};

export interface EvalServerOptions {
  /** Verify's deadline (default 45 ms, production's): a test of the decisions sets one past any stall. */
  verifyDeadlineMs?: number;
  /** Agent operators to register (their keys), for traffic with signed agents. */
  operators?: readonly AgentOperator[];
  /** Where the eval's clock starts (epoch ms; default now). */
  startMs?: number;
  /**
   * How requests reach the app: over loopback HTTP (default), or through Fastify's inject(), the same
   * routes and handlers without a socket (a third of the cost per request: a day's tens of thousands).
   */
  transport?: "http" | "inject";
}

export interface EvalServer {
  /** POSTs a JSON body with the eval tenant's key; throws unless the answer is 200. */
  post(route: string, body: unknown): Promise<unknown>;
  /** The ids of the findings verify recorded for an event. */
  findings(eventId: string): Promise<string[]>;
  /** The server's clock: it stands still while a request is served; move it forward only. */
  readonly clock: { now: number };
  /** The registered operators' key ids (JWK thumbprints), in their order. */
  readonly keyids: readonly string[];
  close(): Promise<void>;
}

/**
 * A fresh server for an evaluation run: a throwaway SQLite file, one raw-PII tenant ("eval") with
 * EVAL_POLICY and a verify:write key, the given agent operators registered, listening on loopback,
 * every part of it on the eval's clock (`clock.now`), which the caller moves.
 */
export async function startEvalServer(o: EvalServerOptions = {}): Promise<EvalServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-eval-"));
  const config = loadConfig({
    WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "eval.db")}`,
    WARDEN_LOG_LEVEL: "silent",
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_VERIFY_DEADLINE_MS: "45",
    WARDEN_STORE_TIMEOUT_MS: "40",
    PORT: "0",
  });
  const timed =
    o.verifyDeadlineMs === undefined ? config : { ...config, verifyDeadlineMs: o.verifyDeadlineMs };
  const clock = { now: o.startMs ?? Date.now() };
  const deps = await buildDeps(timed, undefined, () => clock.now);
  const app = await buildApp(deps, { logger: false });
  const close = async () => {
    await app.close();
    await closeDeps(deps);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const now = clock.now;
    await deps.store.tenants.create({ id: "eval", rawPii: true, logOnly: false, createdAt: now });
    const policy = compilePolicy(EVAL_POLICY, "eval");
    if (!policy.ok) throw new Error(`EVAL_POLICY: ${policy.errors.join("; ")}`);
    await deps.store.policies.put("eval", JSON.stringify(EVAL_POLICY), now);
    const { apiKey } = await issueApiKey(deps.store, {
      tenantId: "eval",
      scopes: ["verify:write"],
      logOnly: false,
      now,
    });
    const keyids: string[] = [];
    for (const op of o.operators ?? []) {
      const parsed = await parseAgentJwks({ keys: [op.publicJwk] });
      if (!parsed.ok) throw new Error(parsed.message);
      const keys = parsed.keys;
      keyids.push(keys[0]?.thumbprint ?? "");
      await deps.store.agents.put({
        operator: op.operator,
        signatureAgent: op.signatureAgent,
        keys,
        fetchDirectory: false,
        createdAt: now,
        updatedAt: now,
      });
    }
    await deps.agents.reload();
    const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
    let post: EvalServer["post"];
    if (o.transport === "inject") {
      await app.ready();
      post = async (route, body) => {
        const res = await app.inject({ method: "POST", url: route, headers, payload: JSON.stringify(body) });
        if (res.statusCode !== 200) throw new Error(`${route} answered ${res.statusCode}: ${res.body}`);
        return res.json();
      };
    } else {
      const url = await app.listen({ host: "127.0.0.1", port: 0 });
      post = async (route, body) => {
        const res = await fetch(`${url}${route}`, { method: "POST", headers, body: JSON.stringify(body) });
        if (res.status !== 200) throw new Error(`${route} answered ${res.status}: ${await res.text()}`);
        return res.json();
      };
    }
    return {
      clock,
      keyids,
      close,
      post,
      async findings(eventId) {
        const event = await deps.store.events.get("eval", eventId);
        return ((event?.signals.findings ?? []) as { id: string }[]).map((f) => f.id);
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}
