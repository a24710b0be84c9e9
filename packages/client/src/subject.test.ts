import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { subjectFromRequest, truncateAddress } from "./subject.js";

const UA =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

/** Sends raw header lines, in this order, to a Node server and resolves the subject built from its request. */
async function subjectOf(lines: [string, string][]) {
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
    return subjectFromRequest({
      method: incoming.method ?? "GET",
      url: incoming.url ?? "/",
      headers: incoming.headers,
      remoteAddress: incoming.socket.remoteAddress,
    });
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
