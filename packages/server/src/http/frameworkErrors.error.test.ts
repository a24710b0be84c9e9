import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_LABELS } from "../errors.js";
import { bearer, expectError, makeTestApp, type TestApp } from "../testing/harness.js";

/**
 * What fails before a route runs (Fastify's router, Node's HTTP parser, the console's static files)
 * still answers the Error schema (docs/api.md#errors) with a stable code, never Fastify's own shape or a 500.
 */

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("acme");
  key = (await t.key("acme")).apiKey;
});
afterAll(() => t.close());

describe("the router's failures", () => {
  it.each([
    ["GET", "/v1/events/%ff"],
    ["POST", "/v1/%ff"],
    ["GET", "/v1/events/%e0%a4%a"],
  ])("%s %s (not percent-decodable) → 400 invalid_url", async (method, url) => {
    const res = await t.app.inject({ method: method as "GET", url, headers: bearer(key), payload: "{}" });
    expectError(res, 400, "invalid_url");
  });

  it("a path parameter of 3,000 characters → 414 uri_too_long", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: `/v1/events/${"e".repeat(3000)}`,
      headers: bearer(key),
    });
    expectError(res, 414, "uri_too_long");
  });

  it("a parameter of 100 characters still reaches the route (an unknown event)", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: `/v1/events/${"e".repeat(100)}`,
      headers: bearer(key),
    });
    expectError(res, 404, "unknown_event_id");
  });
});

describe("the console's static files", () => {
  it("a Range past the end of a file → 416 range_not_satisfiable with Content-Range", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: "/console/index.html",
      headers: { range: "bytes=99999999-" },
    });
    expectError(res, 416, "range_not_satisfiable");
    expect(res.headers["content-range"]).toMatch(/^bytes \*\/\d+$/);
  });

  it("an If-Match naming another version → 412 precondition_failed", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: "/console/index.html",
      headers: { "if-match": '"not-this-one"' },
    });
    expectError(res, 412, "precondition_failed");
  });
});

/** Sends raw bytes to a listening app and resolves everything it answers until it closes. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
  });
}

/** The status line and the JSON body of a raw HTTP/1.1 answer. */
function parse(answer: string): { status: number; body: Record<string, unknown> } {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), body: JSON.parse(body) };
}

function expectRawError(answer: string, status: number, code: string): void {
  const { status: got, body } = parse(answer);
  expect(got).toBe(status);
  expect(Object.keys(body).sort()).toEqual(["code", "error", "message"]);
  expect(body.code).toBe(code);
  expect(body.error).toBe(ERROR_LABELS[status]);
}

describe("requests Node's HTTP parser refuses, on a real socket", () => {
  let port: number;
  let slow: TestApp;
  let slowPort: number;
  beforeAll(async () => {
    port = Number(new URL(await t.app.listen({ port: 0, host: "127.0.0.1" })).port);
    slow = await makeTestApp({
      env: { WARDEN_HEADERS_TIMEOUT_MS: "500", WARDEN_REQUEST_TIMEOUT_MS: "1000" },
    });
    slowPort = Number(new URL(await slow.app.listen({ port: 0, host: "127.0.0.1" })).port);
  });
  afterAll(() => slow.close());

  const request = (headers: string, body = "") =>
    `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;

  it.each([
    ["a Content-Length that is not a number", "Content-Length: abc\r\n"],
    ["two different Content-Lengths", "Content-Length: 2\r\nContent-Length: 3\r\n"],
    [
      "Content-Length beside chunked Transfer-Encoding",
      "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
    ],
    ["a header line without a colon", "Content-Length: 2\r\nnot a header\r\n"],
  ])("%s → 400 malformed_request", async (_what, headers) => {
    expectRawError(await exchange(port, request(headers, "{}")), 400, "malformed_request");
  });

  it("GET /console/%2e%2e/ (a traversal the static server refuses) → 403 forbidden_path, not 500", async () => {
    const answer = await exchange(
      port,
      "GET /console/%2e%2e/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    expectRawError(answer, 403, "forbidden_path");
  });

  it.each(["/console/.env", "/console/.git/config"])(
    "GET %s (a dotfile) → 403 forbidden_path",
    async (url) => {
      const answer = await exchange(port, `GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expectRawError(answer, 403, "forbidden_path");
    },
  );

  it("headers over Node's size limit → 431 headers_too_large", async () => {
    const answer = await exchange(
      port,
      request(`X-Big: ${"a".repeat(20_000)}\r\nContent-Length: 2\r\n`, "{}"),
    );
    expectRawError(answer, 431, "headers_too_large");
  });

  it("headers not finished within WARDEN_HEADERS_TIMEOUT_MS → 408 request_timeout", async () => {
    expectRawError(await exchange(slowPort, "POST /v1/verify HTTP/1.1\r\nHo"), 408, "request_timeout");
  });

  it("an Expect header other than 100-continue → 417 expectation_failed", async () => {
    expectRawError(
      await exchange(port, request("Expect: foo\r\nContent-Length: 2\r\nConnection: close\r\n", "{}")),
      417,
      "expectation_failed",
    );
  });

  it("a sound request on the same server is still answered", async () => {
    const answer = await exchange(
      port,
      request("Content-Length: 35\r\nConnection: close\r\n", '{"action":"signup","subject":{}}   '),
    );
    expect(parse(answer).status).toBe(200);
  });
});
