import { hostingNetworks } from "@warden/server/dist/deps.js";
import { DEFAULT_MODEL } from "@warden/server/dist/operations/verify/decisionModel.js";
import { type ObserveContext, observe } from "@warden/server/dist/operations/verify/evidence.js";
import type { VerifyRequest } from "@warden/server/dist/operations/verify/schema.js";
import { compilePolicy } from "@warden/server/dist/policy/tenantPolicy.js";
import { body } from "./verifyLoad.js";

/**
 * The stateless evidence alone: `observe()` (every signal, the campaign keys, the recorded values)
 * over the verify benches' request body, in this process, no HTTP and no store. Prints microseconds
 * per request, median of BENCH_OBSERVE_ROUNDS rounds of BENCH_OBSERVE_REQUESTS after a warm-up.
 * `npm run build && node packages/tools/dist/bench/observeBench.js`
 */
const ROUNDS = Number(process.env.BENCH_OBSERVE_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_OBSERVE_REQUESTS ?? 20_000);

const parsed = compilePolicy({}, "v1");
if (!parsed.ok) throw new Error("the empty policy does not compile");
const ctx: ObserveContext = {
  model: DEFAULT_MODEL,
  policy: parsed.policy,
  hosting: await hostingNetworks(),
  agentKeys: () => undefined,
  nowSeconds: Math.floor(Date.now() / 1000),
  nowMs: Date.now(),
  tenantId: "bench",
  pageKey: () => undefined,
};
const requests = Array.from({ length: 2_000 }, () => JSON.parse(body()) as VerifyRequest);
const round = (n: number) => {
  const started = performance.now();
  for (let i = 0; i < n; i++) observe(requests[i % requests.length] as VerifyRequest, ctx);
  return ((performance.now() - started) * 1000) / n;
};
round(REQUESTS / 4);
const rounds = Array.from({ length: ROUNDS }, () => round(REQUESTS)).sort((a, b) => a - b);
process.stdout.write(
  `observe(): ${(rounds[Math.floor(ROUNDS / 2)] as number).toFixed(1)} µs a request (median of ${ROUNDS} rounds of ${REQUESTS}; ` +
    `${(rounds[0] as number).toFixed(1)}–${(rounds[ROUNDS - 1] as number).toFixed(1)})\n`,
);
