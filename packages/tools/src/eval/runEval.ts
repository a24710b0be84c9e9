import type { DecisionCosts } from "@warden/server/dist/domain.js";
import type { Verdict } from "@warden/server/dist/operations/verify/schema.js";
import { startEvalServer } from "./evalServer.js";
import {
  type Attempt,
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
  /** The ids of the findings verify recorded for the attempt. */
  findings: string[];
}

/**
 * Verifies arrive every STEP_MS of the eval's clock (about the pace the eval's loopback requests kept
 * on the wall clock), and a page's token is issued `fillMs` before its verify, interleaved with the
 * other attempts in time order: the forms are open concurrently, as on a site.
 */
const STEP_MS = 2;

export interface EvalOptions {
  size: number;
  seed: number;
  costs: DecisionCosts;
  /** Verify's deadline (default 45 ms, production's): a test of the decisions sets one past any stall. */
  verifyDeadlineMs?: number;
}

/**
 * Replays generated traffic through the real HTTP API: a fresh server (evalServer.ts: a throwaway
 * SQLite file, one raw-PII tenant with EVAL_POLICY), the generator's agent operators registered,
 * requests sent one by one over loopback (with subject.tls.ja4 where the generator's edge forwards
 * it) with the given decisionCosts. The server runs on the eval's clock: it stands
 * still while a request is served and moves to each page load and verify in time order, so a form
 * kept open 12 s is 12 s old at its verify without anyone waiting for it.
 */
export async function runEvaluation(o: EvalOptions): Promise<EvalRow[]> {
  const operators = makeOperators();
  const server = await startEvalServer({
    operators,
    ...(o.verifyDeadlineMs === undefined ? {} : { verifyDeadlineMs: o.verifyDeadlineMs }),
  });
  const { clock, post } = server;
  try {
    const attempts = generateTraffic({ seed: o.seed, size: o.size, operators, keyids: server.keyids });
    // The first verify comes after the longest-open page has loaded.
    const lead = Math.max(0, ...attempts.map((a) => a.page?.fillMs ?? 0)) + 1_000;
    const start = clock.now + lead;
    const verifyAt = (i: number) => start + i * STEP_MS;
    const loads = attempts
      .map((a, i) => ({ i, at: a.page ? verifyAt(i) - a.page.fillMs : Number.POSITIVE_INFINITY }))
      .filter((l) => Number.isFinite(l.at))
      .sort((a, b) => a.at - b.at || a.i - b.i);
    const tokens = new Map<number, string>();
    let next = 0;
    const rows: EvalRow[] = [];
    for (const [i, attempt] of attempts.entries()) {
      // The pages that load before this verify ask for their tokens first.
      for (; next < loads.length && (loads[next]?.at ?? 0) <= verifyAt(i); next++) {
        const load = loads[next] as { i: number; at: number };
        const visit = (attempts[load.i] as Attempt).page;
        clock.now = Math.max(clock.now, load.at);
        const issued = (await post("/v1/page-tokens", { subject: visit?.subject })) as { pageToken: string };
        tokens.set(load.i, issued.pageToken);
      }
      clock.now = Math.max(clock.now, verifyAt(i));
      const body = attempt.body(Math.floor(clock.now / 1000));
      const token = tokens.get(i);
      tokens.delete(i);
      if (attempt.page && token !== undefined) {
        const subject = body.subject as Record<string, unknown>;
        body.subject = { ...subject, page: { token, behaviour: attempt.page.behaviour } };
      }
      if (attempt.tls !== undefined) {
        const subject = body.subject as Record<string, unknown>;
        body.subject = { ...subject, tls: { ja4: attempt.tls } };
      }
      const v = (await post("/v1/verify", { ...body, context: { decisionCosts: o.costs } })) as Verdict;
      rows.push({
        cls: attempt.cls,
        decision: v.decision,
        actorType: v.actorType,
        degraded: v.degraded,
        findings: await server.findings(v.eventId),
      });
    }
    return rows;
  } finally {
    await server.close();
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

/** The goals, measured on the rows. */
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

/** The findings of page evidence (docs/api.md, page evidence), by the ids verify records. */
export const PAGE_FINDINGS: ReadonlySet<string> = new Set([
  "page_evidence_missing",
  "page_token_invalid",
  "page_submitted_fast",
  "page_token_expired",
  "page_other_user_agent",
  "page_other_network",
  "page_input_without_keys",
  "page_pointer_teleported",
  "page_synthetic_events",
  "velocity_page_token",
]);
/** The page findings that call an attempt automation: none of them may fall on a person. */
export const PAGE_AUTOMATION_FINDINGS: ReadonlySet<string> = new Set([
  "page_evidence_missing",
  "page_token_invalid",
  "page_submitted_fast",
  "page_input_without_keys",
  "page_pointer_teleported",
]);

/** The findings of the TLS fingerprint (docs/api.md, TLS fingerprint), by the ids verify records. */
export const TLS_FINDINGS: ReadonlySet<string> = new Set([
  "tls_library",
  "tls_not_browser",
  "tls_other_browser",
  "tls_unfamiliar",
]);
/** The TLS findings that call an attempt automation: none of them may fall on a person. */
export const TLS_AUTOMATION_FINDINGS: ReadonlySet<string> = new Set(["tls_library", "tls_not_browser"]);

/**
 * For each class, how many of its attempts got each finding of `ids` ("class  id n, id n"), classes
 * with none left out: where a signal fired, and on whom.
 */
export function findingsTable(rows: readonly EvalRow[], ids: ReadonlySet<string>): string {
  const classes = [...new Set(rows.map((r) => r.cls))];
  const width = Math.max(18, ...classes.map((c) => c.length + 2));
  const lines: string[] = [];
  for (const cls of classes) {
    const counts = new Map<string, number>();
    for (const r of rows) {
      if (r.cls !== cls) continue;
      for (const id of new Set(r.findings.filter((id) => ids.has(id))))
        counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    if (counts.size === 0) continue;
    const cells = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([id, n]) => `${id} ${n}`);
    lines.push(`${cls.padEnd(width)}${cells.join(", ")}`);
  }
  return lines.length === 0 ? "(none)" : lines.join("\n");
}

/** Where page evidence fired, and on whom (findingsTable of PAGE_FINDINGS). */
export const pageFindingsTable = (rows: readonly EvalRow[]): string => findingsTable(rows, PAGE_FINDINGS);

/** Shares of a class's attempts allowed, challenged and denied. */
export function outcome(
  rows: readonly EvalRow[],
  cls: TrafficClass,
): { attempts: number; allow: number; challenge: number; deny: number } {
  const mine = rows.filter((r) => r.cls === cls);
  return {
    attempts: mine.length,
    allow: share(mine, (r) => r.decision === "allow"),
    challenge: share(mine, (r) => r.decision === "challenge"),
    deny: share(mine, (r) => r.decision === "deny"),
  };
}
