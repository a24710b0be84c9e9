import { parseArgs } from "node:util";
import { ACTOR_TYPES, DECISIONS } from "@warden/server/dist/domain.js";
import { resolveCosts } from "@warden/server/dist/operations/verify/decide.js";
import {
  campaignTable,
  dayGoals,
  falsePositivesTable,
  peopleFindingsTable,
  populationTable,
} from "./dayReport.js";
import { evaluateDay } from "./populationDay.js";
import {
  confusion,
  expectedCost,
  findingsTable,
  goals,
  outcome,
  pageFindingsTable,
  runEvaluation,
  TLS_FINDINGS,
} from "./runEval.js";

/**
 * `npm run eval [-- --size N --seed S --costs falseAllow,falseChallenge,falseDeny --people P]`: replays
 * labeled traffic through the HTTP API and prints the confusion tables, the goals and the expected
 * cost; then a day of one tenant's signups from P people (default 6,000; 0 skips it) on devices drawn
 * from real traffic's fingerprints, without and with campaigns beside them (populationDay.ts), and
 * prints false positives by device class and the campaigns' verdicts. Exits 1 when a goal is missed.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      size: { type: "string" },
      seed: { type: "string" },
      costs: { type: "string" },
      people: { type: "string" },
    },
  });
  const size = Number(values.size ?? 3000);
  const seed = Number(values.seed ?? 1);
  const [falseAllow, falseChallenge, falseDeny] = (values.costs ?? "1,1,3").split(",").map(Number);
  const costs = resolveCosts({ falseAllow, falseChallenge, falseDeny });
  const people = Number(values.people ?? 6000);
  const peopleOk = Number.isInteger(people) && (people === 0 || people >= 500);
  if (!Number.isInteger(size) || size < 50 || !Number.isInteger(seed) || !peopleOk) {
    process.stderr.write(
      "usage: npm run eval -- [--size N (≥ 50)] [--seed S] [--costs a,b,c] [--people P (0, or ≥ 500)]\n",
    );
    return 2;
  }
  const started = performance.now();
  const rows = await runEvaluation({ size, seed, costs });
  const seconds = (performance.now() - started) / 1000;
  const out = (s = "") => process.stdout.write(`${s}\n`);
  out(
    `Warden evaluation: ${rows.length} attempts, seed ${seed}, decisionCosts ${JSON.stringify(costs)} (${seconds.toFixed(1)} s)`,
  );
  out();
  out("True class × decision");
  out(confusion(rows, (r) => r.decision, DECISIONS));
  out();
  out("True class × actorType");
  out(confusion(rows, (r) => r.actorType, ACTOR_TYPES));
  out();
  out("Page findings by class (attempts with each)");
  out(pageFindingsTable(rows));
  out();
  out("TLS findings by class (attempts with each; 30% of attempts carry no fingerprint)");
  out(findingsTable(rows, TLS_FINDINGS));
  out();
  const degraded = rows.filter((r) => r.degraded).length;
  out(`Degraded verdicts: ${degraded}`);
  out(`Expected cost per attempt: ${expectedCost(rows, costs).toFixed(4)}`);
  out();
  out("Goals");
  const results = goals(rows);
  for (const g of results) {
    out(`  ${g.met ? "met   " : "MISSED"}  ${g.name}: ${(g.value * 100).toFixed(1)}% (target ${g.target})`);
  }
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const report = (cls: "scripted_page_minting" | "scripted_tls_impersonation", what: string) => {
    const o = outcome(rows, cls);
    out(
      `Not a goal: ${cls} (${what}), ${o.attempts} attempts: allowed ${pct(o.allow)}, challenged ${pct(o.challenge)}, denied ${pct(o.deny)}`,
    );
  };
  out();
  report("scripted_page_minting", "a script that fetches page tokens and fakes a person's counts");
  report("scripted_tls_impersonation", "the same over a TLS-impersonation library");
  if (people === 0) return results.every((g) => g.met) && degraded === 0 ? 0 : 1;

  const day = await evaluateDay({ seed, people });
  const dayDegraded = [...day.quiet, ...day.campaigns].filter((r) => r.degraded).length;
  out();
  out(
    `A day of signups: ${people} people, seed ${seed}, devices from fingerprint-generator's network (${day.seconds.devices.toFixed(1)} s), run without and with the campaigns (${day.seconds.runs.toFixed(1)} s)`,
  );
  out();
  out("Devices and environments");
  out(populationTable(day.quiet));
  out();
  out("People challenged and denied by device class (surge: people whose verdict has campaign_surge)");
  out(falsePositivesTable(day.quiet, day.campaigns));
  out();
  out("Campaigns (allowed / challenged / denied)");
  out(campaignTable(day.quiet, day.campaigns));
  out();
  out("Findings on people by device class, without campaigns (browser_consistent left out)");
  out(peopleFindingsTable(day.quiet));
  out();
  out("Findings on people by device class, with campaigns");
  out(peopleFindingsTable(day.campaigns));
  out();
  out(`Degraded verdicts: ${dayDegraded}`);
  out();
  out("Goals (the day)");
  const dayResults = dayGoals(day.quiet, day.campaigns);
  for (const g of dayResults) {
    out(`  ${g.met ? "met   " : "MISSED"}  ${g.name}: ${(g.value * 100).toFixed(2)}% (target ${g.target})`);
  }
  const met = [...results, ...dayResults].every((g) => g.met);
  return met && degraded === 0 && dayDegraded === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
