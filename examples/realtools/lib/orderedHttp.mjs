// An HTTP client that sends headers in the order given (undici.request with a header list; fetch
// would sort and lower-case them). undici itself writes Host and Connection first and Content-Length
// last, which matches Chromium for the first two; none of the three is among the headers the gate
// forwards to Warden except Host.
import zlib from "node:zlib";
import { Agent, request } from "undici";
import { parseJson } from "./httpFlow.mjs";

/** A response body as text, whatever Content-Encoding the server chose. */
function decode(buffer, encoding) {
  if (encoding === "gzip") return zlib.gunzipSync(buffer).toString();
  if (encoding === "br") return zlib.brotliDecompressSync(buffer).toString();
  if (encoding === "deflate") return zlib.inflateSync(buffer).toString();
  return buffer.toString();
}

/**
 * A `send` for lib/httpFlow.mjs: `headersFor(request)` returns the ordered [name, value] pairs for
 * one request (without Content-Length, which undici computes). One connection pool per sender, as a
 * fresh client would have; TLS as undici comes (the door's certificate is accepted unverified: a
 * test certificate, fixtures/README.md). Call close() when done.
 * @param {string} base
 * @param {(request: import("./httpFlow.mjs").HttpRequest & { url: string }) => [string, string][]} headersFor
 */
export function orderedSender(base, headersFor) {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  return {
    /** @type {import("./httpFlow.mjs").Send} */
    async send(req) {
      const url = base + req.path;
      const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
      const headers = headersFor({ ...req, url })
        .filter(([name]) => name.toLowerCase() !== "content-length")
        .flat();
      const res = await request(url, { method: req.method, headers, body: payload, dispatcher });
      const buffer = Buffer.from(await res.body.arrayBuffer());
      const text = decode(buffer, String(res.headers["content-encoding"] ?? ""));
      return { status: res.statusCode, text, json: parseJson(text) };
    },
    close: () => dispatcher.close(),
  };
}

/** Replaces the values of Host, Origin and Referer (any case) with this door's, keeping their places. */
export function retarget(headers, url, { origin, referer }) {
  const u = new URL(url);
  return headers.map(([name, value]) => {
    const lower = name.toLowerCase();
    if (lower === "host") return [name, u.host];
    if (lower === "origin") return [name, origin];
    if (lower === "referer") return [name, referer];
    return [name, value];
  });
}
