import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions";
import { type CallWrapper, wrapEveryCall } from "../store/everyCall.js";
import type { Store } from "../store/interfaces.js";
import type { Tracing } from "./tracing.js";

/** The span attribute naming the store call (`events.record`), as its span's name does. */
export const ATTR_STORE_CALL = "warden.store.call";

/**
 * An error's kind for a span, never its message: a database's message can quote the row it refused
 * (a unique violation names the key's value).
 */
function errorType(err: unknown): string {
  return err instanceof Error ? err.name : "unknown";
}

/**
 * The store with a span around every call made while an HTTP request is traced: `store <area>.<method>`,
 * a child of the request's span. Calls outside a request (housekeeping, signing-key and policy
 * refreshes, the warm-up) make no span: a trace is one request's.
 */
export function tracedStore(store: Store, tracing: Tracing): Store {
  const traceCall: CallWrapper = (call, fn) => {
    const name = `store ${call}`;
    return async (...args) => {
      const parent = tracing.requestSpan.getStore();
      if (parent === undefined) return fn(...args);
      const span = tracing.tracer.startSpan(
        name,
        { kind: SpanKind.INTERNAL, attributes: { [ATTR_STORE_CALL]: call } },
        trace.setSpan(ROOT_CONTEXT, parent),
      );
      try {
        return await fn(...args);
      } catch (err) {
        span.setAttribute(ATTR_ERROR_TYPE, errorType(err));
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        span.end();
      }
    };
  };
  return wrapEveryCall(store, traceCall);
}
