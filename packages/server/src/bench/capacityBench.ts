import fs from "node:fs";
import path from "node:path";
import { type BenchTarget, onEachStore } from "./benchStores.js";
import { startBenchServer } from "./startBenchServer.js";
import { type Run, steadyLoad } from "./steadyLoad.js";
import { body, load } from "./verifyLoad.js";

/**
 * Useful capacity: the highest steady open-loop rate at which verify answers fewer than 0.1%
 * degraded verdicts and keeps its p99 under its deadline, for SQLite, PostgreSQL and PostgreSQL +
 * Redis, next to the minimal handler's peak (closed loop) measured in the same run. Rates climb a
 * ladder; each step settles, then is measured; the climb stops at the first step that fails.
 *
 *   BENCH_CAPACITY_SECONDS  measured seconds per step (default 5; settling takes 2 more)
 *   BENCH_CAPACITY_LADDER   rates in requests/s (default 100,200,300,...)
 */
const SECONDS = Number(process.env.BENCH_CAPACITY_SECONDS ?? 5);
const LADDER = (
  process.env.BENCH_CAPACITY_LADDER ??
  "100,200,300,400,500,600,700,800,900,1000,1200,1400,1600,1800,2000,2400,2800,3200,3600,4000"
)
  .split(",")
  .map(Number);
const DEADLINE_MS = 30;

interface Step {
  rate: number;
  run: Run;
  ok: boolean;
}

async function climb(target: BenchTarget): Promise<Step[]> {
  const endpoint = {
    origin: target.url,
    path: "/v1/verify",
    headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" },
    body,
  };
  const steps: Step[] = [];
  for (const rate of LADDER) {
    await steadyLoad([endpoint], 2, rate);
    const run = await steadyLoad([endpoint], SECONDS, rate);
    const answered = Math.max(1, Math.round(rate * SECONDS) - run.errors);
    const ok = (run.degraded ?? 0) / answered < 0.001 && run.p99 < DEADLINE_MS && run.errors === 0;
    steps.push({ rate, run, ok });
    process.stdout.write(
      `  ${rate} req/s: degraded ${run.degraded}, p99 ${run.p99} ms, late p99 ${run.lateP99} ms${ok ? "" : "  ← over"}\n`,
    );
    if (!ok) break;
  }
  return steps;
}

const capacity = (steps: Step[] | undefined): string => {
  if (!steps) return "skipped";
  const passed = steps.filter((s) => s.ok);
  return passed.length === 0 ? `< ${LADDER[0]}` : String((passed[passed.length - 1] as Step).rate);
};

async function main(): Promise<void> {
  const minimal = await startBenchServer("minimal");
  let minimalPeak: number;
  try {
    await load(minimal, 3);
    minimalPeak = (await load(minimal, 10)).rps;
  } finally {
    minimal.child.kill("SIGTERM");
  }
  const results = await onEachStore(climb);

  const sqlite = Number(capacity(results[0]?.[1]));
  process.stdout.write(
    [
      "",
      `useful capacity: highest steady rate with < 0.1% degraded and p99 < ${DEADLINE_MS} ms (${SECONDS} s per step)`,
      "",
      "| store | useful capacity (req/s) | × SQLite | × minimal peak |",
      "|---|---:|---:|---:|",
      ...results.map(([store, steps]) => {
        const c = Number(capacity(steps));
        const ratio = (d: number) => (Number.isFinite(c) && d > 0 ? (c / d).toFixed(2) : "–");
        return `| ${store} | ${capacity(steps)} | ${ratio(sqlite)} | ${ratio(minimalPeak)} |`;
      }),
      `| minimal handler (peak, closed loop) | ${minimalPeak.toFixed(0)} | | |`,
      "",
    ].join("\n"),
  );
  fs.mkdirSync(".bench", { recursive: true });
  const file = path.join(".bench", `capacity-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  fs.writeFileSync(file, JSON.stringify({ minimalPeak, results }, null, 2));
  process.stdout.write(`raw figures: ${file}\n`);
}

await main();
