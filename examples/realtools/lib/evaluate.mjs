// Runs client classes against one Warden + example app, N signups each, every signup from its own
// residential /24, and tallies each signup's outcome as the app recorded it.
import { CLIENTS } from "../clients/index.mjs";
import { lacking, openRun, outcomeLine, signupOnce } from "./run.mjs";

/**
 * @typedef {{
 *   id: string, label: string, group: "bots" | "people", model: boolean,
 *   n: number, allowed: number, challenged: number, denied: number, other: number, created: number,
 *   everDenied: number, degraded: number, humanFirst: number, ms: number, errors: string[], restarts: string[],
 *   reasons: Map<string, number>,
 *   ja4: Set<string>, tlsJa4: Set<string>,
 *   skipped?: string,
 * }} Row
 *   ja4: the distinct JA4 values the doors passed to the app for this class's signups (computed from
 *   its ClientHellos; for a MODEL class, the one it declares for its browser, clients/modelJa4.mjs;
 *   "(not passed)" when the doors were plain proxies, --no-ja4); tlsJa4: those computed from the
 *   ClientHellos the class really sent (the same, except for models and --no-ja4).
 */

/** Does `id` match one of the --only selectors (exact id, or a prefix such as "playwright" or "person")? */
export const selected = (id, only) => only.length === 0 || only.some((o) => id === o || id.startsWith(o));

/** @param {import("../clients/types.mjs").ClientClass} client @returns {Row} */
export function emptyRow(client) {
  return {
    id: client.id,
    label: client.label,
    group: client.group,
    model: client.model === true,
    n: 0,
    allowed: 0,
    challenged: 0,
    denied: 0,
    other: 0,
    created: 0,
    everDenied: 0,
    degraded: 0,
    humanFirst: 0,
    ms: 0,
    errors: [],
    restarts: [],
    reasons: new Map(),
    ja4: new Set(),
    tlsJa4: new Set(),
  };
}

/** Adds one signup's outcome to its class's row. @param {Row} row @param {import("./run.mjs").SignupOutcome} o */
export function addOutcome(row, o) {
  row.n += 1;
  row[o.first] += 1;
  if (o.degraded) row.degraded += 1;
  if (o.everDenied) row.everDenied += 1;
  if (o.created) row.created += 1;
  if (o.humanFirst) row.humanFirst += 1;
  if (o.error) row.errors.push(o.error);
  row.restarts.push(...o.restarts);
  for (const j of o.ja4) row.ja4.add(j);
  for (const j of o.tlsJa4) row.tlsJa4.add(j);
  for (const r of o.reasons) {
    // Reasons without their per-request numbers, so equal ones add up.
    const key = r.replace(/\d+(\.\d+)?%?/g, "#");
    row.reasons.set(key, (row.reasons.get(key) ?? 0) + 1);
  }
}

/**
 * @param {{
 *   signups: number | ((client: import("../clients/types.mjs").ClientClass) => number),
 *   only?: string[], pageModel?: string, policy?: unknown, log?: (line: string) => void, reasons?: boolean,
 *   ja4?: boolean,
 * }} opts signups: per client class, the same for all or chosen per class; ja4: false, the doors pass
 *   no JA4 to the app (a plain reverse proxy in front of it)
 * @returns {Promise<{ rows: Row[], seconds: number }>}
 */
export async function evaluate({
  signups,
  only = [],
  pageModel,
  policy,
  log = () => {},
  reasons = true,
  ja4 = true,
}) {
  const started = Date.now();
  const classes = CLIENTS.filter((c) => selected(c.id, only));
  if (classes.length === 0) throw new Error(`no client class matches ${only.join(", ")}`);
  const run = await openRun({
    pageModel,
    policy,
    log,
    display: classes.some((c) => c.needs.includes("display")),
  });
  /** @type {Row[]} */
  const rows = [];
  try {
    for (const client of classes) {
      const row = emptyRow(client);
      rows.push(row);
      const lack = lacking(client, run.missing);
      if (lack.length > 0) {
        row.skipped = `missing ${lack.join(", ")}`;
        log(`${client.id}: SKIPPED (${row.skipped})`);
        continue;
      }
      const rowStarted = Date.now();
      let running;
      try {
        running = await client.start(run.ctx);
      } catch (err) {
        row.skipped = `did not start: ${String(err?.message ?? err).split("\n")[0]}`;
        log(`${client.id}: ${row.skipped}`);
        continue;
      }
      try {
        const count = typeof signups === "function" ? signups(client) : signups;
        for (let i = 0; i < count; i++) {
          const outcome = await signupOnce(run, client, running, { ja4, reasons });
          addOutcome(row, outcome);
          log(outcomeLine(client.id, `#${i + 1}`, outcome));
        }
      } finally {
        await running.close().catch((err) => row.errors.push(`close: ${err?.message ?? err}`));
      }
      row.ms = Date.now() - rowStarted;
    }
  } finally {
    await run.close();
  }
  return { rows, seconds: Math.round((Date.now() - started) / 1000) };
}
