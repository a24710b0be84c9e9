import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { trackClientHellos } from "read-tls-client-hello";
import { describe, expect, it } from "vitest";
import {
  clientJa4,
  type RequestView,
  type SubjectOptions,
  socketJa4,
  subjectFromRequest,
  truncateAddress,
} from "./subject.js";

const UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

/** Sends raw header lines, in this order, to a Node server and resolves the subject built from its request. */
async function subjectOf(lines: [string, string | string[]][], opts: SubjectOptions = {}) {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const seen = new Promise<http.IncomingMessage>((resolve) =>
      server.once("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
        resolve(req);
        res.end();
      }),
    );
    const { port } = server.address() as AddressInfo;
    const req = http.request({ port, host: "127.0.0.1", method: "GET", path: "/signup", setHost: false });
    for (const [name, value] of lines) req.setHeader(name, value);
    req.end();
    const incoming = await seen;
    return subjectFromRequest(
      {
        method: incoming.method ?? "GET",
        url: incoming.url ?? "/",
        headers: incoming.headers,
        remoteAddress: incoming.socket.remoteAddress,
      },
      opts,
    );
  } finally {
    server.close();
  }
}

describe("subjectFromRequest's headers", () => {
  it("keeps the order the browser sent (user agent in its place), drops what is not forwarded", async () => {
    // Chromium with a DevTools language override: Accept-Language between User-Agent and Accept.
    const subject = await subjectOf([
      ["Host", "shop.example"],
      ["Connection", "keep-alive"],
      ["sec-ch-ua-platform", '"Windows"'],
      ["User-Agent", UA],
      ["Accept-Language", "en-US,en;q=0.9"],
      ["Accept", "*/*"],
      ["Cookie", "session=secret"],
      ["Sec-Fetch-Site", "same-origin"],
      ["Sec-Fetch-Mode", "cors"],
      ["Sec-Fetch-Dest", "empty"],
      ["Accept-Encoding", "gzip, deflate, br, zstd"],
    ]);
    expect(Object.keys(subject.headers ?? {})).toEqual([
      "host",
      "sec-ch-ua-platform",
      "user-agent",
      "accept-language",
      "accept",
      "sec-fetch-site",
      "sec-fetch-mode",
      "sec-fetch-dest",
      "accept-encoding",
    ]);
    expect(subject.userAgent).toBe(UA);
    expect(subject.headers?.cookie).toBeUndefined();
  });

  it("a custom list picks the headers, never their order; values over Warden's cap are left out", async () => {
    const view = {
      method: "POST",
      url: "/signup",
      remoteAddress: "203.0.113.9",
      headers: { "X-Custom": "1", accept: "*/*", "accept-language": "x".repeat(9000), "user-agent": UA },
    };
    const subject = await subjectFromRequest(view, { headers: ["accept-language", "x-custom", "accept"] });
    expect(subject.headers).toEqual({ "x-custom": "1", accept: "*/*", "user-agent": UA });
  });
});

describe("subjectFromRequest sends only what Warden accepts", () => {
  it("a user agent over 2,048 characters is left out, as subject.userAgent and as a header; 2,048 is kept", async () => {
    const view = (ua: string) => ({
      method: "GET",
      url: "/signup",
      remoteAddress: "203.0.113.9",
      headers: { "user-agent": ua, accept: "*/*" },
    });
    const long = await subjectFromRequest(view(`Mozilla/5.0 ${"x".repeat(3000)}`));
    expect(long.userAgent).toBeUndefined();
    expect(long.headers).toEqual({ accept: "*/*" });
    const edge = `Mozilla/5.0 ${"y".repeat(2048 - 12)}`;
    const kept = await subjectFromRequest(view(edge));
    expect(kept.userAgent).toBe(edge);
    expect(kept.headers?.["user-agent"]).toBe(edge);
  });

  it.each([
    ["203.0.113.9", "203.0.113.0/24"],
    ["::ffff:203.0.113.9", "203.0.113.0/24"],
    ["2001:db8:1:2::9", "2001:db8:1::/48"],
  ])("the peer %s is sent as ipTrunc %s (exactly /24 or /48, never ip)", async (remoteAddress, network) => {
    const subject = await subjectFromRequest({ method: "GET", url: "/", remoteAddress, headers: {} });
    expect(subject.ipTrunc).toBe(network);
    expect(subject).not.toHaveProperty("ip");
    expect(truncateAddress(remoteAddress)).toBe(network);
  });
});

describe("the client's TLS fingerprint (subject.tls.ja4)", () => {
  const JA4 = "t13d1517h2_8daaf6152771_cb7bf5808d99";
  const view = (remoteAddress: string, headers: RequestView["headers"], ja4?: string): RequestView => ({
    method: "POST",
    url: "/signup",
    remoteAddress,
    headers,
    ...(ja4 === undefined ? {} : { ja4 }),
  });
  const behindProxy = { ja4Header: "CloudFront-Viewer-JA4-Fingerprint", trustedProxies: ["10.0.0.0/8"] };

  it("a trusted proxy's header is sent as subject.tls.ja4", async () => {
    const subject = await subjectFromRequest(
      view("10.1.2.3", { "cloudfront-viewer-ja4-fingerprint": JA4, "x-forwarded-for": "203.0.113.9" }),
      behindProxy,
    );
    expect(subject.tls).toEqual({ ja4: JA4 });
    expect(subject.headers).not.toHaveProperty("cloudfront-viewer-ja4-fingerprint");
  });

  it("the same header from a client that is not a trusted proxy is ignored (anyone can send it)", async () => {
    const headers = { "cloudfront-viewer-ja4-fingerprint": JA4 };
    expect((await subjectFromRequest(view("203.0.113.9", headers), behindProxy)).tls).toBeUndefined();
    expect(clientJa4(view("10.1.2.3", headers), { ja4Header: behindProxy.ja4Header })).toBeUndefined();
  });

  it("a value that is not a JA4 is left out rather than sent (Warden would refuse the verify)", async () => {
    for (const bad of ["", "garbage", `${JA4}x`, "t13d1517h2_8DAAF6152771_cb7bf5808d99"]) {
      const subject = await subjectFromRequest(
        view("10.1.2.3", { "cloudfront-viewer-ja4-fingerprint": bad }),
        behindProxy,
      );
      expect(subject.tls).toBeUndefined();
    }
  });

  it("a header the client sent as well is read at the value the trusted edge appended (the last), never the client's", async () => {
    const CLIENT_JA4 = "t13d1516h2_8daaf6152771_e5627efa2ab1";
    const read = (value: string | string[]) =>
      clientJa4(view("10.1.2.3", { "cloudfront-viewer-ja4-fingerprint": value }), behindProxy);
    // Node joins a repeated header with ", "; other stacks keep each line (string[]).
    expect(read(`junk, ${JA4}`)).toBe(JA4);
    expect(read(["junk", JA4])).toBe(JA4);
    expect(read(`${CLIENT_JA4}, ${JA4}`)).toBe(JA4);
    expect(read([CLIENT_JA4, JA4])).toBe(JA4);
    expect(read([CLIENT_JA4, `junk, ${JA4}`])).toBe(JA4);
    // The edge's own value is not a JA4: nothing is sent, not the client's value before it.
    expect(read(`${CLIENT_JA4}, junk`)).toBeUndefined();
    expect(read([CLIENT_JA4, "junk"])).toBeUndefined();
    expect(read(`${CLIENT_JA4},`)).toBeUndefined();
    // As a Node server receives two header lines, the client's first and the edge's appended.
    const subject = await subjectOf(
      [
        ["Host", "shop.example"],
        ["x-ja4", ["junk", JA4]],
      ],
      {
        ja4Header: "X-JA4",
        trustedProxies: ["127.0.0.1"],
      },
    );
    expect(subject.tls).toEqual({ ja4: JA4 });
  });

  it("a server that terminates TLS itself: the gates read the socket's fingerprint (read-tls-client-hello)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-ja4-"));
    try {
      const key = path.join(dir, "key.pem");
      const cert = path.join(dir, "cert.pem");
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:P-256",
          "-nodes",
          "-keyout",
          key,
          "-out",
          cert,
          "-days",
          "1",
          "-subj",
          "/CN=localhost",
        ],
        { stdio: "ignore" },
      );
      const server = trackClientHellos(
        https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }),
      );
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const seen = new Promise<http.IncomingMessage>((resolve) =>
          server.once("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
            resolve(req);
            res.end();
          }),
        );
        const { port } = server.address() as AddressInfo;
        https.get({ host: "127.0.0.1", port, path: "/", rejectUnauthorized: false }).on("error", () => {});
        const incoming = await seen;
        const ja4 = socketJa4(incoming.socket);
        // Node's own https client, whose fingerprint Warden lists (no ALPN offered: "00").
        expect(ja4).toMatch(/^t13i\d{4}00_a33745022dd6_/);
        const subject = await subjectFromRequest(
          view(incoming.socket.remoteAddress ?? "", incoming.headers, ja4),
        );
        expect(subject.tls).toEqual({ ja4 });
      } finally {
        server.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
