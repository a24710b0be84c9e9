import ipaddr from "ipaddr.js";
import type { SignedRequest } from "./messageSignature.js";
import { requestUrl } from "./signatureBase.js";

/**
 * The hosts a tenant's agents sign for (tenant policy `webBotAuthHosts`). A Web Bot Auth signature
 * covers @authority (or @target-uri): it names a host, not a site's owner, so a signature made for
 * another site, or the public test vectors' example.com, verifies anywhere unless that host is
 * compared with the tenant's. Both sides are read as a WHATWG URL reads a host (RFC 9421 §2.2.3 takes
 * @authority the same way): lower case, IDN as punycode, IP addresses in canonical form; a trailing
 * dot is dropped and the port is ignored.
 */
export interface AgentHosts {
  /** The entries as written, for messages. */
  readonly entries: readonly string[];
  readonly exact: ReadonlySet<string>;
  /** `*.example.com` kept as ".example.com": its subdomains at any depth, not example.com itself. */
  readonly suffixes: readonly string[];
}

/** A URL hostname without its trailing dot (`example.com.` is the same DNS name as `example.com`). */
const withoutTrailingDot = (host: string): string => (host.endsWith(".") ? host.slice(0, -1) : host);

/** The host a request's signature covers (from `:authority`, else `host`); undefined when absent or unreadable. */
export function signedHost(headers: SignedRequest["headers"]): string | undefined {
  if ((headers[":authority"] ?? headers.host) === undefined) return undefined;
  try {
    return withoutTrailingDot(new URL(requestUrl(headers)).hostname) || undefined;
  } catch {
    return undefined;
  }
}

export function hostListed(hosts: AgentHosts, host: string): boolean {
  return hosts.exact.has(host) || hosts.suffixes.some((suffix) => host.endsWith(suffix));
}

type Entry = { ok: true; host: string; wildcard: boolean } | { ok: false; why: string };

/** One entry: a host name or IP address, or `*.` and a domain name; no port, path or user. */
export function parseHostEntry(entry: string): Entry {
  const text = entry.trim();
  const wildcard = text.startsWith("*.");
  const name = wildcard ? text.slice(2) : text;
  const notHost = {
    ok: false,
    why: "is not a host name (a name, an IP address, or *. and a domain name)",
  } as const;
  if (name === "" || /[\s/?#@\\*%]/.test(name)) return notHost;
  const bareIpv6 = ipaddr.IPv6.isValid(name);
  if (!bareIpv6 && (name.startsWith("[") ? !name.endsWith("]") : name.includes(":"))) {
    return { ok: false, why: "has a port: list the host name alone (every port matches)" };
  }
  let host: string;
  try {
    host = withoutTrailingDot(new URL(`https://${bareIpv6 ? `[${name}]` : name}`).hostname);
  } catch {
    return notHost;
  }
  if (host === "" || host.startsWith(".") || host.endsWith(".") || host.includes("..")) return notHost;
  if (wildcard) {
    if (host.startsWith("[") || ipaddr.IPv4.isValidFourPartDecimal(host)) {
      return { ok: false, why: "puts *. before an IP address: a wildcard needs a domain name" };
    }
    if (!host.includes(".")) {
      return { ok: false, why: "would match a whole top-level domain: name at least two labels after *." };
    }
  }
  return { ok: true, host, wildcard };
}

/** Compiles a tenant's entries; each entry that is not a host is reported as `<path>[i]: …`. */
export function compileAgentHosts(
  entries: readonly string[],
  path: string,
): { hosts: AgentHosts; errors: string[] } {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  const errors: string[] = [];
  for (const [i, entry] of entries.entries()) {
    const parsed = parseHostEntry(entry);
    if (!parsed.ok) errors.push(`${path}[${i}]: ${JSON.stringify(entry)} ${parsed.why}`);
    else if (parsed.wildcard) suffixes.push(`.${parsed.host}`);
    else exact.add(parsed.host);
  }
  return {
    hosts: Object.freeze({ entries: Object.freeze([...entries]), exact, suffixes: Object.freeze(suffixes) }),
    errors,
  };
}
