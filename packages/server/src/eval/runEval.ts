import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { issueApiKey } from "../admin/apiKeys.js";
import { buildApp } from "../app.js";
import { loadConfig } from "../config.js";
import { buildDeps, closeDeps } from "../deps.js";
import type { DecisionCosts } from "../operations/verify/decide.js";
import type { Verdict } from "../operations/verify/schema.js";
import { parseAgentJwks } from "../webBotAuth/agentKeys.js";
import {
  generateTraffic,
  HEADLESS,
  makeOperators,
  SCRIPTED,
  TRUTH,
  type TrafficClass,
} from "./trafficGenerator.js";

export interface EvalRow {
  cls: TrafficClass;
  decision: Verdict["decision"];
  actorType: Verdict["actorType"];
  degraded: boolean;
}

export interface EvalOptions {
  size: number;
  seed: number;
  costs: DecisionCosts;
}

/**
 * Replays generated traffic through the real HTTP API: a fresh server on a throwaway SQLite file,
 * one raw-PII tenant, the generator's agent operators registered, requests sent one by one over
 * loopback with the given decisionCosts.
 */
export async function runEvaluation(o: EvalOptions): Promise<EvalRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-eval-"));
  const config = loadConfig({
    WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "eval.db")}`,
    WARDEN_LOG_LEVEL: "silent",
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_VERIFY_DEADLINE_MS: "45",
    WARDEN_STORE_TIMEOUT_MS: "40",
    PORT: "0",
  });
  const deps = await buildDeps(config);
  const app = await buildApp(deps, { logger: false });
  try {
    const now = Date.now();
    await deps.store.tenants.create({ id: "eval", rawPii: true, logOnly: false, createdAt: now });
    const { apiKey } = await issueApiKey(deps.store, {
      tenantId: "eval",
      scopes: ["verify:write"],
      logOnly: false,
      now,
    });
    const operators = makeOperators();
    const keyids: string[] = [];
    for (const op of operators) {
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
    const url = await app.listen({ host: "127.0.0.1", port: 0 });

    const rows: EvalRow[] = [];
    for (const attempt of generateTraffic({ seed: o.seed, size: o.size, operators, keyids })) {
      const body = attempt.body(Math.floor(Date.now() / 1000));
      const res = await fetch(`${url}/v1/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ ...body, context: { decisionCosts: o.costs } }),
      });
      if (res.status !== 200) throw new Error(`verify answered ${res.status}: ${await res.text()}`);
      const v = (await res.json()) as Verdict;
      rows.push({ cls: attempt.cls, decision: v.decision, actorType: v.actorType, degraded: v.degraded });
    }
    return rows;
  } finally {
    await app.close();
    await closeDeps(deps);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface Goal {
  name: string;
  value: number;
  target: string;
  met: boolean;
}

const share = (rows: readonly EvalRow[], test: (r: EvalRow) => boolean): number =>
  rows.length === 0 ? 0 : rows.filter(test).length / rows.length;

/** The issue's goals, measured on the rows. */
export function goals(rows: readonly EvalRow[]): Goal[] {
  const humans = rows.filter((r) => TRUTH[r.cls] === "human");
  const stealth = rows.filter((r) => HEADLESS.has(r.cls));
  const scripted = rows.filter((r) => SCRIPTED.has(r.cls));
  const verified = rows.filter((r) => r.cls === "verified_agent");
  const forged = rows.filter((r) => r.cls === "forged_agent");
  const humanDenied = share(humans, (r) => r.decision === "deny");
  const humanChallenged = share(humans, (r) => r.decision === "challenge");
  const humanAbusive = share(humans, (r) => r.actorType === "agent_abusive");
  const stealthStopped = share(stealth, (r) => r.decision !== "allow");
  const scriptedStopped = share(scripted, (r) => r.decision !== "allow");
  const verifiedPrincipal = share(verified, (r) => r.actorType === "agent_principal");
  const forgedPrincipal = share(forged, (r) => r.actorType === "agent_principal");
  return [
    { name: "humans denied", value: humanDenied, target: "= 0", met: humanDenied === 0 },
    { name: "humans challenged", value: humanChallenged, target: "≤ 2%", met: humanChallenged <= 0.02 },
    { name: "humans labelled agent_abusive", value: humanAbusive, target: "= 0", met: humanAbusive === 0 },
    {
      name: "scripted abuse challenged or denied",
      value: scriptedStopped,
      target: "≥ 95%",
      met: scriptedStopped >= 0.95,
    },
    {
      name: "headless browsers posing as people not allowed",
      value: stealthStopped,
      target: "≥ 90%",
      met: stealthStopped >= 0.9,
    },
    {
      name: "valid agent signatures → agent_principal",
      value: verifiedPrincipal,
      target: "= 100%",
      met: verifiedPrincipal === 1,
    },
    {
      name: "forged signatures → agent_principal",
      value: forgedPrincipal,
      target: "= 0",
      met: forgedPrincipal === 0,
    },
  ];
}

/**
 * Expected cost per attempt under `costs`: an allowed abuser costs falseAllow; a challenged person or
 * verified agent costs falseChallenge; a denied one falseDeny. Correct answers cost nothing.
 */
export function expectedCost(rows: readonly EvalRow[], costs: DecisionCosts): number {
  let total = 0;
  for (const r of rows) {
    const legit = TRUTH[r.cls] !== "abuse";
    if (legit && r.decision === "challenge") total += costs.falseChallenge;
    if (legit && r.decision === "deny") total += costs.falseDeny;
    if (!legit && r.decision === "allow") total += costs.falseAllow;
  }
  return rows.length === 0 ? 0 : total / rows.length;
}

/** A confusion table: one row per class, one column per value of `column`, counts. */
export function confusion<K extends string>(
  rows: readonly EvalRow[],
  column: (r: EvalRow) => K,
  columns: readonly K[],
): string {
  const classes = [...new Set(rows.map((r) => r.cls))];
  const width = Math.max(18, ...classes.map((c) => c.length + 2));
  const header = `${"class".padEnd(width)}${columns.map((c) => c.padStart(16)).join("")}${"total".padStart(8)}`;
  const lines = [header, "-".repeat(header.length)];
  for (const cls of classes) {
    const mine = rows.filter((r) => r.cls === cls);
    lines.push(
      `${cls.padEnd(width)}${columns.map((c) => String(mine.filter((r) => column(r) === c).length).padStart(16)).join("")}${String(mine.length).padStart(8)}`,
    );
  }
  return lines.join("\n");
}
