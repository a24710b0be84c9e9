import SQLite from "better-sqlite3";
import pg from "pg";

const DAY = 86_400_000;

const EVENT_COLUMNS = `id, tenant_id, key_id, created_at, action, surface, session, decision, would_be_decision,
  actor_type, confidence, reasons, degraded, enforcement_mode, costs, signals, engine_version, policy_version,
  attempt, decided_by, risk_estimate, risk_low, risk_high, risk_raised, email_hash, network, reason_codes`;
const FEEDBACK_COLUMNS = `feedback_id, tenant_id, event_id, identity, outcome, value, unit, source, observed_at,
  received_at, status, conflicts_with, seq`;

/**
 * The rows of tenant "bench": `eventCount` events over the 30 days before `now` and about
 * `feedbackCount` effective observations, each as the values of EVENT_COLUMNS / FEEDBACK_COLUMNS.
 */
function* seedRows(
  now: number,
  eventCount: number,
  feedbackCount: number,
): Generator<{ event: unknown[]; observation?: unknown[] }> {
  const reasons = JSON.stringify([
    "The browser headers match the browser the user agent claims.",
    "Estimated abuse risk 3% (range 1%–9%); allow had the lowest expected cost with weights falseAllow 1, falseChallenge 1, falseDeny 3.",
  ]);
  const costs = '{"falseAllow":1,"falseChallenge":1,"falseDeny":3}';
  const actions = ["signup", "signup", "signup", "trial_activation", "api_key"];
  const every = Math.max(1, Math.floor(eventCount / feedbackCount));
  for (let i = 0; i < eventCount; i++) {
    const at = now - 30 * DAY + Math.floor((i * 30 * DAY) / eventCount);
    const id = `evt_${at.toString(36)}${i.toString(36).padStart(8, "0")}`;
    // A skewed risk (most attempts low), decisions by the default weights' thresholds.
    const risk = Math.round(Math.random() ** 3 * 1000) / 1000;
    const decision = risk < 0.3 ? "allow" : risk < 0.85 ? "challenge" : "deny";
    const degraded = i % 997 === 0 ? 1 : 0;
    const network = `198.51.${i % 256}.0/24`;
    const signals = JSON.stringify({
      ipNetwork: network,
      browser: "Chrome",
      findings: [{ id: "browser_consistent", logOdds: -1.2 }],
      risk: { estimate: risk, low: Math.max(0, risk - 0.05), high: Math.min(1, risk + 0.05) },
    });
    const event = [
      id,
      "bench",
      "key_seed",
      at,
      actions[i % actions.length],
      "app.example.com/signup",
      `s${i.toString(36)}`,
      degraded ? "challenge" : decision,
      degraded ? "challenge" : decision,
      decision === "allow" ? "human" : risk > 0.9 ? "agent_abusive" : "unknown",
      0.8,
      reasons,
      degraded,
      "enforce",
      costs,
      signals,
      "warden-engine/3",
      "default",
      null,
      degraded ? "degraded" : "model",
      degraded ? null : risk,
      degraded ? null : Math.max(0, risk - 0.05),
      degraded ? null : Math.min(1, risk + 0.05),
      risk > 0.5 ? 1 : 0,
      (i % 5000).toString(16).padStart(64, "0"),
      network,
      JSON.stringify(reasonCodesOf(i, degraded === 1)),
    ];
    if (i % every !== 0) {
      yield { event };
      continue;
    }
    const abusive = Math.random() < risk;
    const outcome = abusive ? (i % 2 ? "abuse_confirmed" : "credit_burn") : "converted";
    const observation = [
      `fb_${i}`,
      "bench",
      id,
      `identity_${i}`,
      outcome,
      10,
      "usd",
      null,
      at + 3_600_000,
      at + 3_600_000,
      "effective",
      null,
      1,
    ];
    yield { event, observation };
  }
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/**
 * Seeds tenant "bench" directly in the tables the store's migrations made (SQLite), in one
 * transaction: see seedRows.
 */
export function seedConsoleData(file: string, now: number, eventCount: number, feedbackCount: number): void {
  const db = new SQLite(file);
  const event = db.prepare(`insert into events (${EVENT_COLUMNS}) values (${placeholders(27)})`);
  const observation = db.prepare(`insert into feedback (${FEEDBACK_COLUMNS}) values (${placeholders(13)})`);
  db.transaction(() => {
    for (const row of seedRows(now, eventCount, feedbackCount)) {
      event.run(...row.event);
      if (row.observation) observation.run(...row.observation);
    }
  })();
  db.close();
}

/** The same rows in a PostgreSQL database the migrations made, 1,000 rows a statement. */
export async function seedConsoleDataPostgres(
  url: string,
  now: number,
  eventCount: number,
  feedbackCount: number,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const insert = async (table: string, columns: string, rows: unknown[][]) => {
    if (rows.length === 0) return;
    const width = (rows[0] as unknown[]).length;
    const values = rows.map(
      (_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`,
    );
    await client.query(`insert into ${table} (${columns}) values ${values.join(", ")}`, rows.flat());
  };
  try {
    await client.query("begin");
    let events: unknown[][] = [];
    let observations: unknown[][] = [];
    for (const row of seedRows(now, eventCount, feedbackCount)) {
      events.push(row.event);
      if (row.observation) observations.push(row.observation);
      if (events.length === 1000) {
        await insert("events", EVENT_COLUMNS, events);
        await insert("feedback", FEEDBACK_COLUMNS, observations);
        events = [];
        observations = [];
      }
    }
    await insert("events", EVENT_COLUMNS, events);
    await insert("feedback", FEEDBACK_COLUMNS, observations);
    await client.query("commit");
    // A store in use has its pages' visibility set and its dirty pages written: without this the
    // first round measured the seed's own vacuum and checkpoint (84% degraded with no reader).
    await client.query("vacuum analyze");
    // CHECKPOINT needs a superuser or pg_checkpoint: without either the bench goes on unflushed.
    await client.query("checkpoint").catch(() => undefined);
  } finally {
    await client.end();
  }
}

/**
 * An event's reason codes: risk_estimate on every scored event (degraded on the others), then codes
 * from the common (browser_consistent, 60%) to the rare (hosting_network, 0.1%), as a filter meets them.
 */
export function reasonCodesOf(i: number, degraded: boolean): string[] {
  const codes = degraded ? ["degraded"] : [];
  if (i % 10 < 6) codes.push("browser_consistent");
  if (i % 10 === 9) codes.push("ua_automation");
  if (i % 20 === 3) codes.push("email_random");
  if (i % 1000 === 7) codes.push("hosting_network");
  if (!degraded) codes.push("risk_estimate");
  return codes;
}
