import fs from "node:fs";
import path from "node:path";
import { type BenchTarget, onEachStore } from "./benchStores.js";
import { type BurstRun, burst } from "./burstLoad.js";

/**
 * Bursts of simultaneous verifies (closed loop, concurrency 1 to 64) against a real `warden serve`
 * on each store: SQLite, PostgreSQL, PostgreSQL + Redis. Reports, per level, the share of degraded
 * verdicts and the median and p99 latency over ROUNDS rounds. Stores whose server is unreachable
 * are skipped, and the table says so.
 *
 *   BENCH_BURST_LEVELS   concurrency levels (default 1,2,4,8,12,16,32,64)
 *   BENCH_BURST_ROUNDS   rounds per level (default 5)
 *   BENCH_IDEMPOTENT=1   every request carries its own Idempotency-Key
 */
const LEVELS = (process.env.BENCH_BURST_LEVELS ?? "1,2,4,8,12,16,32,64").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_BURST_ROUNDS ?? 5);

interface Row {
  store: string;
  levels: (BurstRun[] | undefined)[];
}

async function measure(target: BenchTarget): Promise<BurstRun[][]> {
  await burst(target, 4, 50);
  const out: BurstRun[][] = [];
  for (const c of LEVELS) {
    const rounds: BurstRun[] = [];
    // About 200 requests a round, at least 10 per caller.
    for (let r = 0; r < ROUNDS; r++) rounds.push(await burst(target, c, Math.max(10, Math.round(200 / c))));
    out.push(rounds);
  }
  return out;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

function cell(rounds: BurstRun[] | undefined): string {
  if (!rounds) return "skipped";
  const requests = rounds.reduce((s, r) => s + r.requests, 0);
  const degraded = rounds.reduce((s, r) => s + r.degraded, 0);
  const failed = rounds.reduce((s, r) => s + r.non200 + r.errors, 0);
  const share = ((100 * degraded) / requests).toFixed(1);
  return `${share}% / ${median(rounds.map((r) => r.p50))} / ${median(rounds.map((r) => r.p99))}${failed ? ` (${failed} failed)` : ""}`;
}

async function main(): Promise<void> {
  const rows: Row[] = (await onEachStore(measure)).map(([store, levels]) => ({
    store,
    levels: levels ?? LEVELS.map(() => undefined),
  }));

  process.stdout.write(
    [
      "",
      `bursts: closed loop, ${ROUNDS} rounds per level, each request its own /24${process.env.BENCH_IDEMPOTENT === "1" ? ", each with an Idempotency-Key" : ""}; degraded share / median p50 ms / median p99 ms`,
      "",
      `| store | ${LEVELS.map((c) => `concurrency ${c}`).join(" | ")} |`,
      `|---|${LEVELS.map(() => "---").join("|")}|`,
      ...rows.map((r) => `| ${r.store} | ${r.levels.map(cell).join(" | ")} |`),
      "",
    ].join("\n"),
  );
  fs.mkdirSync(".bench", { recursive: true });
  const file = path.join(".bench", `burst-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  fs.writeFileSync(file, JSON.stringify({ levels: LEVELS, rounds: ROUNDS, rows }, null, 2));
  process.stdout.write(`raw figures: ${file}\n`);
}

await main();
