import http from "node:http";
import type { AddressInfo } from "node:net";

/** A span as it arrived at the receiver, from OTLP/HTTP protobuf or JSON alike. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  /** Every export request: its path, content type, headers and spans. */
  exports: { path: string; contentType: string; headers: http.IncomingHttpHeaders; spans: ReceivedSpan[] }[];
  close(): Promise<void>;
}

/**
 * A tiny OTLP/HTTP traces receiver for tests: accepts POSTs, decodes protobuf
 * (ExportTraceServiceRequest, opentelemetry-proto's trace_service.proto) or JSON, answers 200 {}.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: OtlpReceiver["exports"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const contentType = req.headers["content-type"] ?? "";
      const spans = contentType.includes("json") ? fromJson(body.toString("utf8")) : fromProtobuf(body);
      exports.push({ path: req.url ?? "", contentType, headers: req.headers, spans });
      res.writeHead(200, { "content-type": contentType.includes("json") ? "application/json" : contentType });
      res.end(contentType.includes("json") ? "{}" : Buffer.alloc(0));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type Value = string | number | boolean;

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

function jsonAttributes(list: JsonKeyValue[] = []): Record<string, Value> {
  return Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue),
    ]),
  );
}

function fromJson(text: string): ReceivedSpan[] {
  const request = JSON.parse(text) as {
    resourceSpans: {
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans: {
        spans: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          attributes?: JsonKeyValue[];
          status?: { code?: number };
        }[];
      }[];
    }[];
  };
  return request.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? "",
        name: s.name,
        kind: s.kind,
        attributes: jsonAttributes(s.attributes),
        statusCode: s.status?.code ?? 0,
        resource: jsonAttributes(rs.resource?.attributes),
      })),
    ),
  );
}

/** One field of a protobuf message: its number and its varint, fixed or length-delimited value. */
interface Field {
  no: number;
  varint?: bigint;
  bytes?: Buffer;
}

/** The fields of one protobuf message, in order (wire types 0, 1, 2 and 5). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error("truncated varint");
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    switch (key & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        out.push({ no, bytes: buf.subarray(at, at + 8) });
        at += 8;
        break;
      case 2: {
        const length = Number(varint());
        out.push({ no, bytes: buf.subarray(at, at + length) });
        at += length;
        break;
      }
      case 5:
        out.push({ no, bytes: buf.subarray(at, at + 4) });
        at += 4;
        break;
      default:
        throw new Error(`unexpected wire type ${key & 7}`);
    }
  }
  return out;
}

const all = (msg: Buffer, no: number): Buffer[] =>
  fields(msg)
    .filter((f) => f.no === no && f.bytes !== undefined)
    .map((f) => f.bytes as Buffer);
const one = (msg: Buffer, no: number): Field | undefined => fields(msg).find((f) => f.no === no);

/** KeyValue { 1 key; 2 AnyValue { 1 string, 2 bool, 3 int, 4 double } }. */
function protoAttributes(kvs: Buffer[]): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const kv of kvs) {
    const key = one(kv, 1)?.bytes?.toString("utf8") ?? "";
    const value = one(kv, 2)?.bytes ?? Buffer.alloc(0);
    const [field] = fields(value);
    if (field?.no === 1) out[key] = field.bytes?.toString("utf8") ?? "";
    else if (field?.no === 2) out[key] = field.varint === 1n;
    else if (field?.no === 3) out[key] = Number(BigInt.asIntN(64, field.varint ?? 0n));
    else if (field?.no === 4) out[key] = field.bytes?.readDoubleLE(0) ?? Number.NaN;
  }
  return out;
}

/**
 * ExportTraceServiceRequest { 1 ResourceSpans { 1 Resource { 1 KeyValue }, 2 ScopeSpans { 2 Span } } };
 * Span { 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 15 Status { 3 code } }.
 */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  return all(body, 1).flatMap((resourceSpans) => {
    const resource = protoAttributes(all(one(resourceSpans, 1)?.bytes ?? Buffer.alloc(0), 1));
    return all(resourceSpans, 2).flatMap((scopeSpans) =>
      all(scopeSpans, 2).map((span) => ({
        traceId: one(span, 1)?.bytes?.toString("hex") ?? "",
        spanId: one(span, 2)?.bytes?.toString("hex") ?? "",
        parentSpanId: one(span, 4)?.bytes?.toString("hex") ?? "",
        name: one(span, 5)?.bytes?.toString("utf8") ?? "",
        kind: Number(one(span, 6)?.varint ?? 0n),
        attributes: protoAttributes(all(span, 9)),
        statusCode: Number(one(one(span, 15)?.bytes ?? Buffer.alloc(0), 3)?.varint ?? 0n),
        resource,
      })),
    );
  });
}
