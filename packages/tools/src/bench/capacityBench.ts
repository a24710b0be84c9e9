import fs from "node:fs";
import path from "node:path";
import { type BenchTarget, onAllStoresAtOnce } from "./benchStores.js";
import { processCpuMs } from "./processCpu.js";
import { startBenchServer } from "./startBenchServer.js";
import { type Run, steadyLoad } from "./steadyLoad.js";
import { body, load } from "./verifyLoad.js";

/**
 * Useful capacity: the highest steady open-loop rate at which verify answers fewer than 0.1%
 * degraded verdicts and keeps its p99 under its deadline, for SQLite, PostgreSQL and PostgreSQL +
 * Redis, next to the minimal handler's peak (closed loop) measured in the same run.
 *
 * The three servers run at once and climb one ladder together: each rate is measured on every store
 * still climbing before the next rate, so the stores are compared moments apart on a noisy machine.
 * Each step settles (2 s), then is measured; a step that fails is measured once more, and a store
 * stops climbing at the first step that fails twice (one stray stall must not end a climb).
 *
 *   BENCH_CAPACITY_SECONDS  measured seconds per step (default 5)
 *   BENCH_CAPACITY_LADDER   rates in requests/s (default 200,400,...)
 *   BENCH_STORES            the stores to measure (default all three)
 *
 * Each step also reports the server process's CPU time per answered request (all its threads; not
 * the database server's): at one rate for all, it says how much work each verify costs.
 */
const SECONDS = Number(process.env.BENCH_CAPACITY_SECONDS ?? 5);
const LADDER = (
  process.env.BENCH_CAPACITY_LADDER ??
  "200,400,600,800,1000,1200,1400,1600,1800,2000,2200,2400,2800,3200,3600,4000"
)
  .split(",")
  .map(Number);
const DEADLINE_MS = 30;

interface Step {
  rate: number;
  run: Run;
  ok: boolean;
  /** The server process's CPU ms per answered request during the measured seconds. */
  cpuMsPerRequest: number | undefined;
}

async function step(store: string, target: BenchTarget, rate: number): Promise<Step> {
  const endpoint = {
    origin: target.url,
    path: "/v1/verify",
    headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" },
    body,
  };
  await steadyLoad([endpoint], 2, rate);
  const cpuBefore = processCpuMs(target.pid);
  const run = await steadyLoad([endpoint], SECONDS, rate);
  const cpuAfter = processCpuMs(target.pid);
  const answered = Math.max(1, Math.round(rate * SECONDS) - run.errors);
  const ok = (run.degraded ?? 0) / answered < 0.001 && run.p99 < DEADLINE_MS && run.errors === 0;
  const cpuMsPerRequest =
    cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / answered;
  const cpu = cpuMsPerRequest === undefined ? "" : `, server CPU ${cpuMsPerRequest.toFixed(3)} ms/request`;
  process.stdout.write(
    `  ${store.padEnd(18)} ${rate} req/s: degraded ${run.degraded}, p99 ${run.p99} ms, late p99 ${run.lateP99} ms${cpu}${ok ? "" : "  ← over"}\n`,
  );
  return { rate, run, ok, cpuMsPerRequest };
}

/** Climbs the ladder on every store together; each store's steps, the last one the step it failed twice. */
async function climb(targets: [string, BenchTarget | undefined][]): Promise<[string, Step[] | undefined][]> {
  const steps = new Map<string, Step[]>(targets.filter(([, t]) => t).map(([s]) => [s, []]));
  const climbing = new Set(steps.keys());
  for (const rate of LADDER) {
    for (const [store, target] of targets) {
      if (!target || !climbing.has(store)) continue;
      let measured = await step(store, target, rate);
      if (!measured.ok) measured = await step(store, target, rate);
      steps.get(store)?.push(measured);
      if (!measured.ok) climbing.delete(store);
    }
    if (climbing.size === 0) break;
  }
  return targets.map(([store]) => [store, steps.get(store)]);
}

const capacity = (steps: Step[] | undefined): string => {
  if (!steps) return "skipped";
  const passed = steps.filter((s) => s.ok);
  return passed.length === 0 ? `< ${LADDER[0]}` : String((passed[passed.length - 1] as Step).rate);
};

const MINIMAL = "minimal handler";
/** The rate at which every server's CPU per request is compared (one rate for all: it varies with load). */
const CPU_RATE = Number(process.env.BENCH_CAPACITY_CPU_RATE ?? 1000);
const cpuAt = (steps: Step[] | undefined): string => {
  const ms = steps?.find((s) => s.rate === CPU_RATE)?.cpuMsPerRequest;
  return ms === undefined ? "–" : ms.toFixed(2);
};

async function main(): Promise<void> {
  const minimal = await startBenchServer("minimal");
  let minimalPeak: number;
  let results: [string, Step[] | undefined][];
  try {
    await load(minimal, 3);
    minimalPeak = (await load(minimal, 10)).rps;
    // The minimal handler climbs the same ladder beside the stores: its useful capacity is what this
    // machine allows any verify at all under the same open-loop rule.
    results = await onAllStoresAtOnce((stores) =>
      climb([...stores, [MINIMAL, { ...minimal, pid: minimal.child.pid }]]),
    );
  } finally {
    minimal.child.kill("SIGTERM");
  }

  const of = (name: string) => Number(capacity(results.find(([s]) => s === name)?.[1]));
  const sqlite = of("SQLite");
  const minimalCapacity = of(MINIMAL);
  process.stdout.write(
    [
      "",
      `useful capacity: highest steady rate with < 0.1% degraded and p99 < ${DEADLINE_MS} ms (${SECONDS} s per step)`,
      "",
      `| store | useful capacity (req/s) | × SQLite | × minimal handler's useful capacity | × minimal handler's peak | server CPU ms/request at ${CPU_RATE} req/s |`,
      "|---|---:|---:|---:|---:|---:|",
      ...results.map(([store, steps]) => {
        const c = Number(capacity(steps));
        const ratio = (d: number) => (Number.isFinite(c) && d > 0 ? (c / d).toFixed(2) : "–");
        return `| ${store} | ${capacity(steps)} | ${ratio(sqlite)} | ${ratio(minimalCapacity)} | ${ratio(minimalPeak)} | ${cpuAt(steps)} |`;
      }),
      `| minimal handler's peak (closed loop, 16 connections) | ${minimalPeak.toFixed(0)} | | | | |`,
      "",
    ].join("\n"),
  );
  fs.mkdirSync(".bench", { recursive: true });
  const file = path.join(".bench", `capacity-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  fs.writeFileSync(file, JSON.stringify({ minimalPeak, results }, null, 2));
  process.stdout.write(`raw figures: ${file}\n`);
}

await main();
