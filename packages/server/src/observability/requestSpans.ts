import { defaultTextMapGetter, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from "@opentelemetry/semantic-conventions";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Verdict } from "../operations/verify/schema.js";
import type { Tracing } from "./tracing.js";

/** Span attributes of Warden's own: the authenticated tenant, and verify's answer. */
export const ATTR_TENANT_ID = "warden.tenant_id";
export const ATTR_DECISION = "warden.decision";
export const ATTR_DEGRADED = "warden.degraded";

const traceContext = new W3CTraceContextPropagator();

/**
 * A server span per HTTP request, named `<METHOD> <route template>` (OpenTelemetry's HTTP
 * conventions), the child of the caller's span when the request carries a W3C `traceparent`. Its
 * attributes are bounded and hold no personal data: the method, the route template (never the URL: a
 * query string can hold an address), the status, the tenant once authenticated, and verify's decision
 * (withVerdictOnSpan). Never a client address, a user agent, a header or a subject field. The
 * request's log lines carry the span's `traceId`.
 */
export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  // A callback hook, not an async one: `run` must wrap the rest of the request's chain, which Fastify
  // calls from `done`. The body parser keeps that context (Fastify binds it to the request).
  app.addHook("onRequest", (request, _reply, done) => {
    if (!tracing.recording) return done();
    const route = request.routeOptions.url;
    const span = tracing.tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: request.method,
          ...(route === undefined ? {} : { [ATTR_HTTP_ROUTE]: route }),
        },
      },
      traceContext.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter),
    );
    spans.set(request, span);
    request.log = request.log.child({ traceId: span.spanContext().traceId });
    tracing.requestSpan.run(span, done);
  });
  const end = (request: FastifyRequest, statusCode: number | undefined): void => {
    const span = spans.get(request);
    if (span === undefined) return;
    spans.delete(request);
    if (request.caller) span.setAttribute(ATTR_TENANT_ID, request.caller.tenant.id);
    if (statusCode === undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, "request_aborted");
      span.setStatus({ code: SpanStatusCode.ERROR });
    } else {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
      // A server span's error is a 5xx; a 4xx is the client's (OpenTelemetry's HTTP conventions).
      if (statusCode >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span.end();
  };
  app.addHook("onResponse", (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook("onRequestAbort", (request, done) => {
    end(request, undefined);
    done();
  });
}

/** Verify's answer on the request's span, besides `onVerdict`; `onVerdict` itself when traces are off. */
export function withVerdictOnSpan(
  onVerdict: (verdict: Verdict) => void,
  tracing: Tracing | undefined,
): (verdict: Verdict) => void {
  if (tracing === undefined) return onVerdict;
  return (verdict) => {
    onVerdict(verdict);
    tracing.requestSpan
      .getStore()
      ?.setAttributes({ [ATTR_DECISION]: verdict.decision, [ATTR_DEGRADED]: verdict.degraded });
  };
}
