import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  newSeed,
  solvePow,
  solvesPow,
} from "@warden/server/dist/operations/challenge/methods/proofOfWork/proofOfWork.js";
import autocannon from "autocannon";
import { startBenchServer } from "./startBenchServer.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const _here = path.dirname(fileURLToPath(import.meta.url));
const out = (line = "") => process.stdout.write(`${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function verificationCost(): void {
  const seed = newSeed();
  const nonces = Array.from({ length: 1000 }, (_, i) => `n${i}`);
  const rounds = 200;
  const started = performance.now();
  let valid = 0;
  for (let r = 0; r < rounds; r++) for (const n of nonces) if (solvesPow(seed, n, 4)) valid++;
  const us = ((performance.now() - started) * 1000) / (rounds * nonces.length);
  out(
    `proof verification (solvesPow, difficulty 4): ${us.toFixed(2)} µs per proof (${rounds * nonces.length} checks, ${valid} valid)`,
  );
}

async function throughput(): Promise<void> {
  const server = await startBenchServer("verify");
  const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" };
  const post = async (p: string, body: unknown) =>
    (
      await fetch(`${server.url}${p}`, { method: "POST", headers, body: JSON.stringify(body) })
    ).json() as Promise<Record<string, unknown>>;
  try {
    // Challenged attempts, each with its session: a challenge is issued only to its event's session.
    const events: { eventId: string; session: string }[] = [];
    for (let i = 0; i < 200; i++) {
      const session = `bench-${i}`;
      const v = await post("/v1/verify", { action: "signup", session, subject: {} });
      if (v.decision !== "challenge")
        throw new Error(`the bench's attempt was not challenged: ${v.decision}`);
      events.push({ eventId: v.eventId as string, session });
    }
    const pick = (i: number) => events[i % events.length] as { eventId: string; session: string };
    const issue = await autocannon({
      url: `${server.url}/v1/challenge`,
      connections: CONNECTIONS,
      duration: SECONDS,
      method: "POST",
      headers,
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify(pick(Math.floor(Math.random() * events.length))),
          }),
        },
      ],
    });
    out();
    out("| challenge | req/s | p50 ms | p99 ms | non-2xx |");
    out("|---|---:|---:|---:|---:|");
    out(
      `| issue (${CONNECTIONS} connections) | ${Math.round(issue.requests.average)} | ${issue.latency.p50} | ${issue.latency.p99} | ${issue.non2xx} |`,
    );

    // Completion: pre-issue and pre-solve challenges, then send each valid completion once.
    const solved: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const { eventId, session } = pick(i);
      const c = await post("/v1/challenge", { eventId, session });
      const { seed, difficulty } = c.instructions as { seed: string; difficulty: number };
      solved.push(
        JSON.stringify({
          challengeId: c.challengeId,
          session,
          proof: { nonce: solvePow(seed, difficulty).nonce },
        }),
      );
    }
    let next = 0;
    const started = performance.now();
    const complete = await autocannon({
      url: `${server.url}/v1/challenge`,
      connections: CONNECTIONS,
      amount: solved.length,
      method: "POST",
      headers,
      requests: [{ setupRequest: (req) => ({ ...req, body: solved[next++ % solved.length] as string }) }],
    });
    out(
      `| complete (valid proofs, ${solved.length} challenges) | ${Math.round((complete.requests.total / (performance.now() - started)) * 1000)} | ${complete.latency.p50} | ${complete.latency.p99} | ${complete.non2xx} |`,
    );
  } finally {
    server.child.kill("SIGTERM");
  }
}

function solveTimes(): void {
  out();
  out("| difficulty | expected hashes | samples | median solve ms | median hashes |");
  out("|---:|---:|---:|---:|---:|");
  for (const [difficulty, samples] of [
    [4, 21],
    [5, 9],
    [6, Number(process.env.BENCH_SOLVES_D6 ?? 3)],
  ] as const) {
    const ms: number[] = [];
    const attempts: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      attempts.push(solvePow(newSeed(), difficulty).attempts);
      ms.push(performance.now() - started);
    }
    out(
      `| ${difficulty} | ${16 ** difficulty} | ${samples} | ${Math.round(median(ms))} | ${median(attempts)} |`,
    );
  }
}

verificationCost();
await throughput();
solveTimes();
