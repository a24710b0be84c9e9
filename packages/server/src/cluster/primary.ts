import cluster, { type Worker } from "node:cluster";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import { bootstrapDemoTenant, demoBanner } from "../admin/bootstrap.js";
import type { Config } from "../config.js";
import { openStore } from "../deps.js";
import { isWorkerMessage, type MetricsJson, type PrimaryMessage } from "./messages.js";

/** The `warden` launcher every worker runs (it finds itself a cluster worker and serves). */
const WARDEN_BIN = fileURLToPath(new URL("../../bin/warden.js", import.meta.url));

/** Replacements that died before listening, one after another, before the primary gives up. */
export const MAX_FAILED_STARTS = 5;
/** A worker that lived this long before dying is replaced at once; sooner deaths back off. */
const STABLE_MS = 30_000;
const MAX_BACKOFF_MS = 30_000;
/** Each worker's metrics must reach the primary within this (a worker's /metrics waits 5 s in all). */
const GATHER_TIMEOUT_MS = 4000;
/** Migrations and the demo tenant run on a connection that is not on a request's deadline. */
const PRIMARY_STORE_TIMEOUT_MS = 5000;

export interface PrimaryOptions {
  workers: number;
  /** Bring the schema up to date before the workers start; false: only check it. */
  migrate: boolean;
  demo: boolean;
}

interface WorkerState {
  worker: Worker;
  forkedAt: number;
  ready: boolean;
}

/**
 * `warden serve --workers N`: the primary process. It migrates the schema once (or checks it), then
 * forks N workers that share PORT (and WARDEN_ADMIN_PORT) through node:cluster, each a whole Warden
 * that starts without migrating. It holds no request state and serves nothing itself:
 * - a worker that dies is replaced: at once when it had lived 30 s, else after a back-off doubling
 *   from WARDEN_WORKER_RESTART_BACKOFF_MS (0.5 s) to 30 s; MAX_FAILED_STARTS replacements in a row that die before listening stop
 *   everything with exit 1, so the supervisor above sees a service that cannot start;
 * - a worker of the first start that fails stops everything with its exit code, as one process would;
 * - SIGTERM or SIGINT is passed to every worker, which drains as a single process does; the primary
 *   exits 0 once all have exited 0 (1 if one did not, or had to be killed past its grace period);
 * - a worker's /metrics asks it for every worker's metrics, added up (prom-client's aggregation).
 */
export async function runPrimary(
  config: Config,
  print: (line: string) => void,
  options: PrimaryOptions,
): Promise<number> {
  const log = pino({ level: config.logLevel }).child({ role: "primary" });
  const store = await openStore({ ...config, redisUrl: undefined }, PRIMARY_STORE_TIMEOUT_MS, {
    migrate: options.migrate,
  });
  let demo: Awaited<ReturnType<typeof bootstrapDemoTenant>>;
  try {
    demo = options.demo ? await bootstrapDemoTenant(store, Date.now()) : undefined;
  } finally {
    await store.close();
  }

  const own = new Registry();
  const listening = new Gauge({
    name: "warden_workers_listening",
    help: "Workers of this `warden serve` that listen (its --workers when all is well)",
    registers: [own],
  });
  const restarts = new Counter({
    name: "warden_worker_restarts_total",
    help: "Workers of this `warden serve` that died and were replaced (since it started)",
    registers: [own],
  });

  cluster.setupPrimary({ exec: WARDEN_BIN, args: ["serve"] });
  const states = new Map<number, WorkerState>();
  const timers = new Set<NodeJS.Timeout>();
  let phase: "starting" | "running" | "stopping" = "starting";
  let exitCode = 0;
  let failedStarts = 0;
  let quickDeaths = 0;
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });

  const gatherings = new Map<number, { left: Set<number>; parts: MetricsJson[]; done: () => void }>();
  let nextGathering = 0;
  /** Every listening worker's metrics and the primary's own, added up, as Prometheus text. */
  const clusterMetrics = async (): Promise<string> => {
    const id = nextGathering++;
    const asked = [...states.values()].filter((s) => s.ready && s.worker.isConnected());
    const parts: MetricsJson[] = [await own.getMetricsAsJSON()];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        gatherings.delete(id);
        reject(new Error(`${gathering.left.size} worker(s) sent no metrics within ${GATHER_TIMEOUT_MS} ms`));
      }, GATHER_TIMEOUT_MS);
      const gathering = {
        left: new Set(asked.map((s) => s.worker.id)),
        parts,
        done: () => {
          clearTimeout(timer);
          gatherings.delete(id);
          resolve();
        },
      };
      gatherings.set(id, gathering);
      for (const s of asked) s.worker.send({ warden: "metrics?", id } satisfies PrimaryMessage);
      if (gathering.left.size === 0) gathering.done();
    });
    // prom-client averages event-loop lag across workers; the worst worker is the one to see.
    const worst = parts.map((metrics) =>
      metrics.map((m) => (m.aggregator === "average" ? { ...m, aggregator: "max" as const } : m)),
    );
    return AggregatorRegistry.aggregate(worst).metrics();
  };
  /** A worker that will send no more metrics (it answered, or exited): its part of each gathering is done. */
  const answered = (id: number, workerId: number, metrics: MetricsJson | undefined) => {
    const gathering = gatherings.get(id);
    if (!gathering?.left.delete(workerId)) return;
    if (metrics) gathering.parts.push(metrics);
    if (gathering.left.size === 0) gathering.done();
  };

  const stop = (code: number) => {
    if (code !== 0 && exitCode === 0) exitCode = code;
    if (phase === "stopping") return;
    phase = "stopping";
    for (const t of timers) clearTimeout(t);
    timers.clear();
    if (states.size === 0) return finish(exitCode);
    for (const { worker } of states.values()) worker.process.kill("SIGTERM");
    // A worker drains for the grace period, then gives its degraded events 5 s; past that (and a
    // margin to close the store), it is killed so the primary's own supervisor is not kept waiting.
    const killer = setTimeout(() => {
      for (const { worker } of states.values()) {
        log.error(
          { worker: worker.id, workerPid: worker.process.pid },
          "worker still running after the drain: killed",
        );
        worker.process.kill("SIGKILL");
      }
    }, config.shutdownGraceMs + 15_000);
    killer.unref();
  };

  const fork = (replacing: boolean) => {
    // Each worker knows how many share the port: the console's read budget is split among them.
    const worker = cluster.fork({ WARDEN_WORKERS: String(options.workers) });
    const state: WorkerState = { worker, forkedAt: Date.now(), ready: false };
    states.set(worker.id, state);
    listening.set([...states.values()].filter((s) => s.ready).length);
    worker.on("message", (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.warden === "metrics") return answered(message.id, worker.id, message.metrics);
      if (message.warden === "cluster-metrics?") {
        clusterMetrics().then(
          (text) => worker.send({ warden: "cluster-metrics", id: message.id, text } satisfies PrimaryMessage),
          (err: Error) =>
            worker.send({
              warden: "cluster-metrics",
              id: message.id,
              error: err.message,
            } satisfies PrimaryMessage),
        );
        return;
      }
      state.ready = true;
      failedStarts = 0;
      listening.set([...states.values()].filter((s) => s.ready).length);
      if (replacing)
        log.info({ worker: worker.id, workerPid: worker.process.pid }, "replacement worker listening");
      if (phase === "starting" && [...states.values()].every((s) => s.ready)) {
        phase = "running";
        log.info(
          { workers: options.workers, url: message.url, adminUrl: message.adminUrl },
          "all workers listening",
        );
        if (demo) print(demoBanner(demo, message.url));
      }
    });
    worker.on("exit", (code: number | null, signal: NodeJS.Signals | null) => {
      states.delete(worker.id);
      for (const id of gatherings.keys()) answered(id, worker.id, undefined);
      listening.set([...states.values()].filter((s) => s.ready).length);
      if (phase === "stopping") {
        // One stopped before it had its signal handlers (still starting) ended on the signal itself.
        const clean = code === 0 || (!state.ready && signal === "SIGTERM");
        if (!clean) {
          log.error(
            { worker: worker.id, workerPid: worker.process.pid, code, signal },
            "worker did not stop cleanly",
          );
          if (exitCode === 0) exitCode = 1;
        }
        if (states.size === 0) finish(exitCode);
        return;
      }
      const failure = { worker: worker.id, workerPid: worker.process.pid, code, signal };
      if (!state.ready) {
        if (phase === "starting") {
          log.error(failure, "a worker failed to start: stopping the others");
          return stop(code === null || code === 0 ? 1 : code);
        }
        failedStarts += 1;
        if (failedStarts >= MAX_FAILED_STARTS) {
          log.error({ ...failure, failedStarts }, "replacement workers keep failing to start: stopping");
          return stop(1);
        }
      }
      quickDeaths = Date.now() - state.forkedAt < STABLE_MS ? quickDeaths + 1 : 0;
      const delay =
        quickDeaths === 0
          ? 0
          : Math.min(MAX_BACKOFF_MS, config.workerRestartBackoffMs * 2 ** (quickDeaths - 1));
      log.error({ ...failure, restartInMs: delay }, "worker died: replacing it");
      restarts.inc();
      const timer = setTimeout(() => {
        timers.delete(timer);
        fork(true);
      }, delay);
      timers.add(timer);
    });
  };

  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal, workers: states.size }, "shutting down: every worker drains");
    stop(0);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  log.info({ workers: options.workers }, "starting workers");
  for (let i = 0; i < options.workers; i++) fork(false);
  try {
    return await finished;
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
}
