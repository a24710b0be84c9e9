import ipaddr from "ipaddr.js";
import type { Subject } from "./types.js";

/** What the SDK needs of an incoming request, from any framework (see the gates' adapters). */
export interface RequestView {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The TCP peer's address. */
  remoteAddress: string | undefined;
  /** "https" when the connection (or a trusted proxy in front) was TLS. */
  scheme?: "http" | "https";
  /**
   * The JA4 fingerprint of the client's TLS handshake, when this server terminated it and computed
   * one (the gates read `socket.tlsClientHello.ja4`, which read-tls-client-hello's trackClientHellos
   * sets). Behind a proxy, use the `ja4Header` option instead.
   */
  ja4?: string | undefined;
}

/** JA4 (TLS client), as Warden accepts it in subject.tls.ja4. */
const JA4 = /^[tqd](?:1[0-3]|s[23]|d[1-3]|00)[di][0-9]{4}[0-9A-Za-z]{2}_[0-9a-f]{12}_[0-9a-f]{12}$/;

/** The JA4 a TLS fingerprinting library left on a Node socket, if any. */
export function socketJa4(socket: unknown): string | undefined {
  const hello = (socket as { tlsClientHello?: { ja4?: unknown } } | undefined)?.tlsClientHello;
  return typeof hello?.ja4 === "string" ? hello.ja4 : undefined;
}

/**
 * Headers forwarded to Warden: what its browser-consistency, client-hint and Web Bot Auth checks read.
 * Everything else (cookies, authorization, forwarding headers, referer) stays in your application.
 */
export const FORWARDED_HEADERS: readonly string[] = Object.freeze([
  "accept",
  "content-type",
  "accept-encoding",
  "accept-language",
  "host",
  "sec-ch-ua",
  "sec-ch-ua-mobile",
  "sec-ch-ua-platform",
  "sec-ch-ua-platform-version",
  "sec-ch-ua-full-version-list",
  "sec-ch-ua-arch",
  "sec-ch-ua-model",
  "sec-fetch-site",
  "sec-fetch-mode",
  "sec-fetch-dest",
  "sec-fetch-user",
  "upgrade-insecure-requests",
  "signature",
  "signature-input",
  "signature-agent",
]);

/** Warden's own caps: values of at most 8,192 characters, arrays of at most 16, a user agent of 2,048. */
const MAX_VALUE = 8192;
const MAX_VALUES = 16;
const MAX_USER_AGENT = 2048;

export interface SubjectOptions {
  /** The address the person typed; only its SHA-256 (trimmed, lower-cased) is sent. */
  email?: string | undefined;
  /**
   * Proxies in front of your app (addresses or CIDRs, e.g. "10.0.0.0/8"): X-Forwarded-For is read
   * right to left, skipping these; without any, the TCP peer is the client and X-Forwarded-For is
   * ignored (anyone can send it).
   */
  trustedProxies?: readonly string[];
  /**
   * A header in which the proxy in front of your app (one of trustedProxies) writes the JA4
   * fingerprint of the client's TLS handshake: CloudFront's `cloudfront-viewer-ja4-fingerprint`, or
   * the header your CDN or load balancer is set to write. Read only when the request came from a
   * trusted proxy (a client can send any header); sent as subject.tls.ja4.
   */
  ja4Header?: string;
  /** Replaces FORWARDED_HEADERS. */
  headers?: readonly string[];
  /** Form fields to let Warden read generically (field count, links, repeated long texts). */
  formData?: Record<string, unknown>;
}

/** SHA-256 as lowercase hex, with WebCrypto (Node ≥ 20, Deno, Bun, workers). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The address trimmed and lower-cased: the form Warden hashes, so subject.emailSha256 is the SHA-256
 * of this (the server's mailbox matching of +tag and dot variants needs the raw address).
 */
export const trimmedLowerCaseEmail = (email: string): string => email.trim().toLowerCase();

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * The element a proxy appended to a header the client may have sent too: the last one, whether the
 * lines were kept apart (string[]) or joined with ", " (Node, the Fetch API's Headers).
 */
const lastElement = (v: string | string[] | undefined): string | undefined =>
  (Array.isArray(v) ? v.at(-1) : v)?.split(",").at(-1)?.trim();

function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const trimmed = text.trim().replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(trimmed)) return undefined;
  const addr = ipaddr.parse(trimmed);
  return addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address()
    : addr;
}

function isTrusted(addr: ipaddr.IPv4 | ipaddr.IPv6, trusted: readonly string[]): boolean {
  return trusted.some((entry) => {
    const [range, bits] = entry.includes("/")
      ? ipaddr.parseCIDR(entry)
      : [parseAddress(entry) as ipaddr.IPv4 | ipaddr.IPv6, -1];
    if (!range || range.kind() !== addr.kind()) return false;
    return bits < 0 ? range.toString() === addr.toString() : addr.match(range, bits);
  });
}

/** The peer is one of the trusted proxies. */
function fromTrustedProxy(view: RequestView, trustedProxies: readonly string[]): boolean {
  const peer = view.remoteAddress ? parseAddress(view.remoteAddress) : undefined;
  return peer !== undefined && trustedProxies.length > 0 && isTrusted(peer, trustedProxies);
}

/**
 * The client's JA4: from this server's own TLS termination, else from a trusted proxy's header, at
 * the value the proxy appended (the last: a client that sends the header too only prepends). A value
 * that is not a JA4 is left out (Warden would refuse the verify over it), and never replaced by an
 * earlier one, which the client chose.
 */
export function clientJa4(
  view: RequestView,
  opts: Pick<SubjectOptions, "ja4Header" | "trustedProxies">,
): string | undefined {
  let value = view.ja4;
  if (
    value === undefined &&
    opts.ja4Header !== undefined &&
    fromTrustedProxy(view, opts.trustedProxies ?? [])
  ) {
    value = lastElement(view.headers[opts.ja4Header.toLowerCase()]);
  }
  return value !== undefined && JA4.test(value) ? value : undefined;
}

/** The client's address: the peer, or, behind trusted proxies, the first untrusted hop of X-Forwarded-For. */
export function clientAddress(view: RequestView, trustedProxies: readonly string[] = []): string | undefined {
  const peer = view.remoteAddress ? parseAddress(view.remoteAddress) : undefined;
  if (!peer) return undefined;
  if (trustedProxies.length === 0 || !isTrusted(peer, trustedProxies)) return peer.toString();
  const hops = (
    Array.isArray(view.headers["x-forwarded-for"])
      ? view.headers["x-forwarded-for"].join(",")
      : (view.headers["x-forwarded-for"] ?? "")
  )
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i] as string);
    if (!hop) return undefined; // a forged or broken hop: no client address rather than a wrong one
    if (!isTrusted(hop, trustedProxies)) return hop.toString();
  }
  return peer.toString();
}

/** The /24 (IPv4) or /48 (IPv6) network of an address, as Warden's ipTrunc. */
export function truncateAddress(address: string): string | undefined {
  const addr = parseAddress(address);
  if (!addr) return undefined;
  const bits = addr.kind() === "ipv4" ? 24 : 48;
  const bytes = addr.toByteArray();
  const keep = bits / 8;
  const masked = bytes.map((b, i) => (i < keep ? b : 0));
  return `${ipaddr.fromByteArray(masked).toString()}/${bits}`;
}

/**
 * The subject of a verify, built the way the README recommends: the email as its SHA-256, the client
 * network truncated, the user agent, an allow-list of headers within Warden's caps, and — when the
 * request carries a Web Bot Auth signature — the request line as pseudo-headers so signatures over
 * @method, @authority and @path can be checked.
 */
export async function subjectFromRequest(view: RequestView, opts: SubjectOptions = {}): Promise<Subject> {
  const subject: Subject = {};
  if (typeof opts.email === "string" && opts.email.trim() !== "")
    subject.emailSha256 = await sha256Hex(trimmedLowerCaseEmail(opts.email));
  const address = clientAddress(view, opts.trustedProxies);
  const network = address ? truncateAddress(address) : undefined;
  if (network) subject.ipTrunc = network;
  // A longer user agent is left out (as subject.userAgent or a header): Warden would refuse the request.
  const given = first(view.headers["user-agent"]);
  const userAgent = given !== undefined && given.length <= MAX_USER_AGENT ? given : undefined;
  if (userAgent !== undefined) subject.userAgent = userAgent;
  // In the order the request carried them (where the framework keeps it): Warden reads where a
  // Chromium request has its Accept-Language, which the DevTools protocol's override gives away.
  const forwarded = new Set(opts.headers ?? FORWARDED_HEADERS);
  const headers: Record<string, string | string[]> = {};
  for (const [given, value] of Object.entries(view.headers)) {
    const name = given.toLowerCase();
    if (value === undefined) continue;
    if (name === "user-agent") {
      if (userAgent !== undefined) headers[name] = userAgent;
    } else if (forwarded.has(name)) {
      if (!Array.isArray(value)) {
        if (value.length <= MAX_VALUE) headers[name] = value;
      } else {
        const kept = value.filter((v) => v.length <= MAX_VALUE).slice(0, MAX_VALUES);
        if (kept.length > 0) headers[name] = kept;
      }
    }
  }
  if (headers["signature-input"] !== undefined) {
    headers[":method"] = view.method.toUpperCase();
    headers[":scheme"] = view.scheme ?? "http";
    const host = first(view.headers.host);
    if (host !== undefined) headers[":authority"] = host;
    headers[":path"] = view.url;
  }
  subject.headers = headers;
  const ja4 = clientJa4(view, opts);
  if (ja4 !== undefined) subject.tls = { ja4 };
  if (opts.formData) subject.formData = opts.formData;
  return subject;
}
