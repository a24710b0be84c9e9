import { hostingNetworks } from "@warden/server/dist/deps.js";
import { DEFAULT_COSTS, decide, reasonsFor } from "@warden/server/dist/operations/verify/decide.js";
import { DEFAULT_MODEL } from "@warden/server/dist/operations/verify/decisionModel.js";
import { observe } from "@warden/server/dist/operations/verify/evidence.js";
import { principalFor } from "@warden/server/dist/operations/verify/principal.js";
import type { VerifyRequest } from "@warden/server/dist/operations/verify/schema.js";
import {
  mergeLimits,
  velocityChecks,
  velocityFindings,
} from "@warden/server/dist/operations/verify/signals/velocity.js";
import { DEFAULT_TENANT_POLICY } from "@warden/server/dist/policy/tenantPolicy.js";
import { parseAgentJwks, signatureCheckFor } from "@warden/server/dist/webBotAuth/agentKeys.js";
import type { KnownAgentKey } from "@warden/server/dist/webBotAuth/verifyAgent.js";
import { generateTraffic, makeOperators, type TrafficClass } from "../eval/trafficGenerator.js";

/**
 * What the decision engine adds to one verify, in process: reading the evidence (signals, Web Bot Auth
 * verification, hosting lookup), the velocity findings and the decision with its reasons and
 * principal. The store round trips are measured by verifyBench. Per-call times over the eval's
 * traffic mix, p50/p99 per class.
 */
const SIZE = Number(process.env.BENCH_ENGINE_SIZE ?? 4000);
const ROUNDS = 5;

async function main(): Promise<void> {
  const operators = makeOperators();
  const keys = new Map<string, KnownAgentKey>();
  const keyids: string[] = [];
  for (const op of operators) {
    const parsed = await parseAgentJwks({ keys: [op.publicJwk] });
    if (!parsed.ok) throw new Error(parsed.message);
    const k = parsed.keys[0];
    if (!k) throw new Error("no key");
    keyids.push(k.thumbprint);
    keys.set(k.thumbprint, {
      operator: op.operator,
      signatureAgent: op.signatureAgent,
      alg: k.alg,
      check: signatureCheckFor(k.jwk, k.alg),
    });
  }
  const loadStart = performance.now();
  const hosting = hostingNetworks();
  const loadMs = performance.now() - loadStart;
  const now = Math.floor(Date.now() / 1000);
  const attempts = generateTraffic({ seed: 11, size: SIZE, operators, keyids }).map((a) => ({
    cls: a.cls,
    req: a.body(now) as VerifyRequest,
  }));
  const limits = mergeLimits(DEFAULT_MODEL.velocity, DEFAULT_TENANT_POLICY.velocity);
  const times = new Map<TrafficClass | "all", number[]>();
  const record = (cls: TrafficClass, ms: number) => {
    for (const k of [cls, "all"] as const) {
      const list = times.get(k) ?? [];
      list.push(ms);
      times.set(k, list);
    }
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const { cls, req } of attempts) {
      const t0 = performance.now();
      const obs = observe(req, {
        model: DEFAULT_MODEL,
        policy: DEFAULT_TENANT_POLICY,
        hosting,
        agentKeys: (id) => keys.get(id),
        nowSeconds: now,
        nowMs: now * 1000,
        tenantId: "bench",
        pageKey: () => undefined,
      });
      const checks = velocityChecks("bench", req.action, obs.velocityKeys, limits);
      const readings = checks.map(() => ({ current: 1, previous: 0, elapsed: 0.5 }));
      const findings = [
        ...obs.findings,
        ...velocityFindings(req.action, checks, readings, DEFAULT_MODEL.weights.velocity),
      ];
      const a = decide(
        {
          findings,
          channels: obs.channels,
          browserConsistent: obs.browserConsistent,
          agent: obs.agent.outcome,
          lists: obs.lists,
          verifiedAgents: DEFAULT_TENANT_POLICY.verifiedAgents(req.action),
        },
        DEFAULT_COSTS,
        DEFAULT_MODEL,
      );
      reasonsFor(a, DEFAULT_COSTS, obs.channels);
      principalFor(obs.agent, obs.businessDomain);
      const ms = performance.now() - t0;
      if (round > 0) record(cls, ms); // round 0 warms the JIT and the user-agent cache
    }
  }
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
  };
  console.log(`\nengine cost per verify (in process, ${SIZE} generated attempts × ${ROUNDS - 1} rounds)`);
  console.log(`hosting data set loaded in ${loadMs.toFixed(0)} ms (${hosting.size} ranges)`);
  console.log("class                 n      p50 µs   p99 µs");
  for (const [cls, xs] of [...times.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    console.log(
      `${cls.padEnd(18)}${String(xs.length).padStart(6)}${(pct(xs, 50) * 1000).toFixed(0).padStart(10)}${(pct(xs, 99) * 1000).toFixed(0).padStart(9)}`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
