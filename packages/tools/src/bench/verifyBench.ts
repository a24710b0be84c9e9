import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startBenchServer } from "./startBenchServer.js";
import { CONNECTIONS, load, type Run, SETTLE_SECONDS, steadyVerify } from "./verifyLoad.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** Peak rounds, each the minimal handler then verify, back to back. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const _here = path.dirname(fileURLToPath(import.meta.url));

const fmt = (n: number, digits = 0) => n.toFixed(digits);

async function main(): Promise<void> {
  const verify = await startBenchServer("verify");
  const minimal = await startBenchServer("minimal");
  try {
    process.stdout.write(`warming up (${CONNECTIONS} connections)…\n`);
    await load(verify, 3);
    await load(minimal, 3);
    const peaks: Record<string, Run[]> = { verify: [], minimal: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of [minimal, verify]) {
        process.stdout.write(`peak ${target.name}, round ${round + 1}: ${SECONDS}s…\n`);
        peaks[target.name]?.push(await load(target, SECONDS));
      }
    }
    const best = (runs: Run[] = []) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
    const vPeak = best(peaks.verify);
    const mPeak = best(peaks.minimal);
    const half = Math.max(1, Math.floor(vPeak.rps / 2));
    process.stdout.write(
      `verify and minimal at half of verify's peak (${half} req/s, steady): ${SETTLE_SECONDS}s settling, then ${SECONDS}s each…\n`,
    );
    const vHalf = await steadyVerify([verify], SECONDS, half);
    const mHalf = await steadyVerify([minimal], SECONDS, half);

    const ratio = vPeak.rps / mPeak.rps;
    // This machine's speed drifts between runs by up to half: a ratio of two runs made seconds apart
    // (one round) is steadier than the best of each, which can come from different phases.
    const pairs = (peaks.verify ?? []).map((v, i) => v.rps / (peaks.minimal?.[i]?.rps ?? Number.NaN));
    const pairwise = [...pairs].sort((a, b) => a - b)[Math.floor(pairs.length / 2)] ?? Number.NaN;
    const lines = [
      "",
      `| run | req/s | p50 ms | p99 ms | non-2xx | errors |`,
      `|---|---:|---:|---:|---:|---:|`,
      `| minimal handler, peak | ${fmt(mPeak.rps)} | ${mPeak.p50} | ${mPeak.p99} | ${mPeak.non2xx} | ${mPeak.errors} |`,
      `| verify, peak | ${fmt(vPeak.rps)} | ${vPeak.p50} | ${vPeak.p99} | ${vPeak.non2xx} | ${vPeak.errors} |`,
      `| minimal handler at ${half} req/s | ${fmt(mHalf.rps)} | ${mHalf.p50} | ${mHalf.p99} | ${mHalf.non2xx} | ${mHalf.errors} |`,
      `| verify at ${half} req/s (half its peak) | ${fmt(vHalf.rps)} | ${vHalf.p50} | ${vHalf.p99} | ${vHalf.non2xx} | ${vHalf.errors} |`,
      "",
      `verify / minimal peak throughput: ${fmt(ratio * 100, 1)}% (best of ${ROUNDS} rounds each; goal ≥ 60%)`,
      `verify / minimal, round by round: ${pairs.map((r) => `${fmt(r * 100, 1)}%`).join(", ")} (median ${fmt(pairwise * 100, 1)}%)`,
      `verify p99 at half peak: ${vHalf.p99} ms (goal < 10 ms)`,
      `load generator late by (p99): ${mHalf.lateP99} ms (minimal run), ${vHalf.lateP99} ms (verify run)`,
      "",
    ];
    process.stdout.write(lines.join("\n"));
    fs.mkdirSync(".bench", { recursive: true });
    const file = path.join(".bench", `verify-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify(
        { seconds: SECONDS, connections: CONNECTIONS, peaks, vHalf, mHalf, ratio, pairs, pairwise },
        null,
        2,
      ),
    );
    process.stdout.write(`raw figures: ${file}\n`);
  } finally {
    verify.child.kill("SIGTERM");
    minimal.child.kill("SIGTERM");
  }
}

await main();
