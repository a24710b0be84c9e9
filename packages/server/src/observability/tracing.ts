import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import type { Span, Tracer } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { TraceSampler, TracingConfig } from "../config.js";

const SERVICE_VERSION = (createRequire(import.meta.url)("../../package.json") as { version: string }).version;

/** How often a failing exporter is reported, at most. */
const REPORT_EVERY_MS = 60_000;

function sampler(kind: TraceSampler, ratio: number): Sampler {
  switch (kind) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/**
 * The OTLP/HTTP exporter the configuration names. Every option is given here, from config.ts, so the
 * exporter's own fallbacks to OTEL_* variables (endpoint, timeout, agent) never apply; it still
 * merges OTEL_EXPORTER_OTLP_HEADERS, which config.ts parsed into the same headers.
 */
function otlpExporter(config: TracingConfig): SpanExporter {
  const options = {
    url: config.endpoint.href,
    headers: { ...config.headers },
    timeoutMillis: config.timeoutMs,
    httpAgentOptions: { keepAlive: true },
  };
  return config.protocol === "http/json" ? new OtlpJsonExporter(options) : new OtlpProtobufExporter(options);
}

export interface TracingOptions {
  /** Another exporter than OTLP/HTTP: tests hand in an in-memory one. */
  exporter?: SpanExporter;
}

/**
 * OpenTelemetry traces of one process: a span per HTTP request (requestSpans.ts) with a child span
 * per store call made while it runs (tracedStore.ts). Built only when the configuration turns traces
 * on; when it is off there is no Tracing, no tracer, no exporter, and no hook or wrapper on the request
 * path. Nothing is registered globally (no global tracer provider, context manager or propagator):
 * the request span travels in `requestSpan`, so several apps in one process (tests) keep theirs apart.
 */
export class Tracing {
  readonly tracer: Tracer;
  /** The span of the HTTP request the current code runs for; undefined outside a request. */
  readonly requestSpan = new AsyncLocalStorage<Span>();
  /** False while the start-up rehearsal runs: its requests are not the service's traffic. */
  recording = true;
  /** Where failed exports are reported (the app's logger, once it exists). */
  report: (err: unknown, what: string) => void = () => undefined;
  private readonly provider: TracerProvider;
  private lastReport = Number.NEGATIVE_INFINITY;
  private failedSinceReport = 0;

  constructor(config: TracingConfig, options: TracingOptions = {}) {
    const exporter = options.exporter ?? otlpExporter(config);
    const reporting: SpanExporter = {
      export: (spans, done) =>
        exporter.export(spans, (result) => {
          if (result.code !== ExportResultCode.SUCCESS) this.exportFailed(result.error);
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: config.serviceName,
        [ATTR_SERVICE_VERSION]: SERVICE_VERSION,
      }),
      sampler: sampler(config.sampler, config.samplerRatio),
      spanProcessors: [
        new BatchSpanProcessor({ exporter: reporting, exportTimeoutMillis: config.timeoutMs }),
      ],
    });
    this.tracer = this.provider.getTracer("warden", SERVICE_VERSION);
  }

  /** Exports every ended span now. */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  /** Exports what is left and stops the exporter (graceful shutdown); later spans are dropped. */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }

  /** A collector that is down must not fill the log: the first failure, then one line a minute. */
  private exportFailed(err: unknown): void {
    this.failedSinceReport++;
    const now = Date.now();
    if (now - this.lastReport < REPORT_EVERY_MS) return;
    this.report(err, `trace export failed (${this.failedSinceReport} batches since the last report)`);
    this.lastReport = now;
    this.failedSinceReport = 0;
  }
}
