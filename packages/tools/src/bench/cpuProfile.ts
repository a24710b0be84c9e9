import fs from "node:fs";
import { Session } from "node:inspector/promises";

/** Microseconds between samples: fine enough for 0.05 ms pieces over a few thousand requests. */
const SAMPLING_INTERVAL_US = 250;

/**
 * In a bench server: SIGUSR2 starts V8's sampling CPU profiler on the main thread, and `stop()` writes
 * what it sampled to `file` (a `.cpuprofile`, which Chrome's DevTools also open). So a profile covers
 * the measured seconds only, not the start-up and the settling load before them.
 */
export function profileOnSignal(file: string): { stop(): Promise<void> } {
  const session = new Session();
  let started: Promise<void> | undefined;
  process.on("SIGUSR2", () => {
    started ??= (async () => {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
      await session.post("Profiler.start");
    })();
  });
  return {
    async stop() {
      if (!started) return;
      await started;
      const { profile } = await session.post("Profiler.stop");
      fs.writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/** The parts of V8's profile this summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Where a sample's time goes, by the function it was in (its self time). A native function (a SQLite
 * statement's `run`, a crypto job's) has no script of its own and counts for the nearest caller that
 * has one, which is what the rules below name. First match wins.
 */
const CATEGORIES: readonly [string, (fn: string, url: string) => boolean][] = [
  ["idle", (fn) => fn === "(idle)"],
  ["the profiler itself", (_fn, url) => url === "node:inspector"],
  ["garbage collection", (fn) => fn === "(garbage collector)"],
  ["V8 and native code without a JavaScript caller", (fn) => fn === "(program)"],
  [
    "SQLite statements (better-sqlite3, native)",
    (fn, url) =>
      (url.includes("sqlite-driver") && fn === "executeQuery") ||
      (url.includes("sqliteStore") && fn === "runDirect") ||
      url.includes("better-sqlite3"),
  ],
  ["PostgreSQL client (pg)", (_fn, url) => /node_modules\/(pg|pg-protocol|pg-pool)\//.test(url)],
  ["query building (Kysely)", (_fn, url) => url.includes("node_modules/kysely/")],
  [
    "ES256 signature",
    (fn, url) =>
      fn === "signOneShot" ||
      url.includes("node_modules/jose/") ||
      /^node:internal\/crypto\/(webcrypto|webidl|ec|sig|keys|util|hashnames)$/.test(url),
  ],
  ["hashing and randomness (node:crypto)", (_fn, url) => url.startsWith("node:internal/crypto")],
  ["JSON parse of the body", (_fn, url) => url.includes("secure-json-parse")],
  ["response serialisation", (_fn, url) => url.includes("fast-json-stringify")],
  ["schema validation (Ajv)", (fn, url) => url.includes("node_modules/ajv") || /^validate\d*$/.test(fn)],
  [
    "Fastify (routing, hooks, reply)",
    (_fn, url) => /node_modules\/(fastify|avvio|find-my-way|@fastify)\//.test(url),
  ],
  ["metrics (prom-client)", (_fn, url) => url.includes("prom-client") || url.endsWith("/http/metrics.js")],
  ["logging (pino)", (_fn, url) => url.includes("node_modules/pino")],
  [
    "HTTP and sockets (node)",
    (fn, url) =>
      /^node:(internal\/)?(_http|http|net|stream|streams|internal\/stream|internal\/http)/.test(url) ||
      url.startsWith("node:_http") ||
      ["writev", "writeUtf8String", "writeBuffer"].includes(fn),
  ],
  ["verify: evidence, signals, decision", (_fn, url) => /\/dist[^/]*\/operations\//.test(url)],
  ["Warden's store layer", (_fn, url) => /\/dist[^/]*\/store\//.test(url)],
  ["Warden, other", (_fn, url) => /\/packages\/server\/dist/.test(url)],
  ["node internals, other", (_fn, url) => url.startsWith("node:")],
];

/**
 * Microseconds of the profile spent in each category (idle included, under "idle"). The samples are
 * of the main thread's wall time while it was not idle: time the thread waited for a core (two cores
 * shared with the load generator) counts for the function it was in.
 */
export function summarise(profile: CpuProfile): Map<string, number> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
  /** The frame a sample counts for: its own, or its nearest caller with a script (see CATEGORIES). */
  const frameOf = (id: number) => {
    let node = nodes.get(id);
    const own = node?.callFrame;
    if (own?.url !== "" || own.functionName.startsWith("(")) return own;
    while (node && node.callFrame.url === "") node = nodes.get(parents.get(node.id) ?? -1);
    return node?.callFrame ?? own;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = frameOf(id);
    const fn = frame?.functionName ?? "";
    const url = frame?.url ?? "";
    const name = CATEGORIES.find(([, match]) => match(fn, url))?.[0] ?? "other";
    totals.set(name, (totals.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return totals;
}
