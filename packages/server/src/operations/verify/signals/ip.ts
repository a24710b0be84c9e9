import ipaddr from "ipaddr.js";
import { canonicalIPv4 } from "../../../lib/ipText.js";

/** IPv4 addresses are truncated to their /24, IPv6 to their /48 (one site's allocation). */
export const IPV4_PREFIX = 24;
export const IPV6_PREFIX = 48;

/**
 * The truncated network of an address or CIDR, as "a.b.c.0/24" or "2001:db8:1::/48"; undefined when
 * it does not parse. IPv4-mapped IPv6 addresses count as IPv4. A longer-than-/24 (or /48) prefix, or a
 * full address sent as ipTrunc, is truncated here, so no full address is ever kept.
 */
export function truncateIp(input: string): string | undefined {
  return readNetwork(input)?.text;
}

export interface Network {
  /** The truncated network as text, e.g. "203.0.113.0/24". */
  text: string;
  /** Its first address and prefix length, for list and hosting lookups. */
  addr: ipaddr.IPv4 | ipaddr.IPv6;
  prefix: number;
}

/**
 * Parses and truncates an address or CIDR; undefined when it does not parse. Verify reads the same
 * field twice in a row (validation, then evidence), so the last answer is kept; answers are frozen.
 */
export function readNetwork(input: string): Network | undefined {
  if (input === last.input) return last.network;
  const network = parseNetwork(input);
  last = { input, network };
  return network;
}
let last: { input: string | undefined; network: Network | undefined } = {
  input: undefined,
  network: undefined,
};

function parseNetwork(input: string): Network | undefined {
  const text = input.trim();
  if (!canonicalIPv4(text.split("/")[0] ?? "")) return undefined;
  // Choosing the family first avoids ipaddr's try-IPv6-then-IPv4 (an exception per IPv4 address).
  const family = text.includes(":") ? ipaddr.IPv6 : ipaddr.IPv4;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  let prefix: number | undefined;
  try {
    if (text.includes("/")) {
      const [a, p] = family.parseCIDR(text);
      addr = a;
      prefix = p;
    } else {
      addr = family.parse(text);
    }
  } catch {
    return undefined;
  }
  if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    addr = (addr as ipaddr.IPv6).toIPv4Address();
    prefix = prefix === undefined ? undefined : Math.max(0, prefix - 96);
  }
  const max = addr.kind() === "ipv4" ? IPV4_PREFIX : IPV6_PREFIX;
  const bits = Math.min(prefix ?? max, max);
  // The network address: the address's bytes with everything past `bits` cleared.
  const bytes = addr.toByteArray().map((b, i) => b & (0xff << Math.max(0, Math.min(8, 8 - (bits - i * 8)))));
  const base = ipaddr.fromByteArray(bytes);
  return Object.freeze({ text: `${base.toString()}/${bits}`, addr: base, prefix: bits });
}

/**
 * Whether a read network is exactly Warden's truncation (/24 or /48): an address, or a network as
 * narrow or narrower, read here; a wider network keeps its own, shorter prefix.
 */
export function fullyTruncated(network: Network): boolean {
  return network.prefix === (network.addr.kind() === "ipv4" ? IPV4_PREFIX : IPV6_PREFIX);
}

/**
 * A full address as a one-address network (/32 or /128), for tenant lists; undefined when it does not
 * parse or is a network (a CIDR, even a /32).
 */
export function readAddress(input: string): Network | undefined {
  const text = input.trim();
  if (!canonicalIPv4(text)) return undefined;
  try {
    let addr: ipaddr.IPv4 | ipaddr.IPv6 = text.includes(":")
      ? ipaddr.IPv6.parse(text)
      : ipaddr.IPv4.parse(text);
    if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
      addr = (addr as ipaddr.IPv6).toIPv4Address();
    }
    const prefix = addr.kind() === "ipv4" ? 32 : 128;
    return { text: `${addr.toString()}/${prefix}`, addr, prefix };
  } catch {
    return undefined;
  }
}
