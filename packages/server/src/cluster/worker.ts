import cluster from "node:cluster";
import type { Registry } from "prom-client";
import { isPrimaryMessage, type WorkerMessage } from "./messages.js";

/** How long a worker's /metrics waits for the primary to gather every worker's metrics. */
const CLUSTER_METRICS_TIMEOUT_MS = 5000;

/**
 * A worker's side of `warden serve --workers N`: it tells the primary when it listens, answers the
 * primary's requests for its metrics, and has its /metrics answer every worker's metrics added up
 * (a scrape lands on whichever worker the primary hands the connection to: one worker's counters
 * alone would jump between scrapes).
 */
export interface WorkerChannel {
  ready(url: string, adminUrl: string | undefined): void;
  /** Answer the primary's requests for this worker's metrics from `registry`. */
  shareMetrics(registry: Registry): void;
  /** Every worker's metrics added up, in Prometheus text; rejects when the primary does not answer. */
  clusterMetrics(): Promise<string>;
}

const send = (message: WorkerMessage): void => {
  if (process.connected) process.send?.(message);
};

/** The channel of this process when it is a cluster worker, else undefined. */
export function workerChannel(): WorkerChannel | undefined {
  if (!cluster.isWorker) return undefined;
  let shared: Registry | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  process.on("message", (message: unknown) => {
    if (!isPrimaryMessage(message)) return;
    if (message.warden === "metrics?") {
      const registry = shared;
      if (registry === undefined) return send({ warden: "metrics", id: message.id, metrics: [] });
      void registry.getMetricsAsJSON().then(
        (metrics) => send({ warden: "metrics", id: message.id, metrics }),
        () => send({ warden: "metrics", id: message.id, metrics: [] }),
      );
      return;
    }
    const asked = waiting.get(message.id);
    if (asked === undefined) return;
    waiting.delete(message.id);
    if ("text" in message) asked.resolve(message.text);
    else asked.reject(new Error(message.error));
  });
  return {
    ready: (url, adminUrl) => send({ warden: "ready", url, adminUrl }),
    shareMetrics: (registry) => {
      shared = registry;
    },
    clusterMetrics: () =>
      new Promise<string>((resolve, reject) => {
        if (!process.connected) return reject(new Error("the primary process is gone"));
        const id = nextId++;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the primary gathered no metrics within ${CLUSTER_METRICS_TIMEOUT_MS} ms`));
        }, CLUSTER_METRICS_TIMEOUT_MS);
        waiting.set(id, {
          resolve: (text) => {
            clearTimeout(timer);
            resolve(text);
          },
          reject: (err) => {
            clearTimeout(timer);
            reject(err);
          },
        });
        send({ warden: "cluster-metrics?", id });
      }),
  };
}
