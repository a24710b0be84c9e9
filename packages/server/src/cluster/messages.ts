import type { Registry } from "prom-client";

/** One registry's metrics as JSON (what prom-client aggregates across processes). */
export type MetricsJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/**
 * What the primary of `warden serve --workers N` and its workers say to each other over the cluster's
 * IPC channel. Every message has a `warden` field naming its kind, so messages of other libraries on
 * the same channel are ignored.
 */
export type WorkerMessage =
  /** The worker listens (and its admin listener too, when configured): count it as started. */
  | { warden: "ready"; url: string; adminUrl: string | undefined }
  /** A worker's /metrics asks the primary for every worker's metrics, added up. */
  | { warden: "cluster-metrics?"; id: number }
  /** A worker's own metrics, answering the primary's `metrics?`. */
  | { warden: "metrics"; id: number; metrics: MetricsJson };

export type PrimaryMessage =
  /** The primary collects every worker's metrics (for one worker's /metrics). */
  | { warden: "metrics?"; id: number }
  /** The answer to `cluster-metrics?`: Prometheus text, or why there is none. */
  | { warden: "cluster-metrics"; id: number; text: string }
  | { warden: "cluster-metrics"; id: number; error: string };

const KINDS_FROM_WORKERS = new Set(["ready", "cluster-metrics?", "metrics"]);
const KINDS_FROM_PRIMARY = new Set(["metrics?", "cluster-metrics"]);

const kind = (message: unknown): unknown =>
  typeof message === "object" && message !== null ? (message as { warden?: unknown }).warden : undefined;

export const isWorkerMessage = (message: unknown): message is WorkerMessage =>
  KINDS_FROM_WORKERS.has(kind(message) as string);

export const isPrimaryMessage = (message: unknown): message is PrimaryMessage =>
  KINDS_FROM_PRIMARY.has(kind(message) as string);
