import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type ipaddr from "ipaddr.js";
import type { ReasonCategory } from "../reasonCodes.js";
import type { Finding } from "./findings.js";
import type { Signal } from "./signal.js";

/**
 * Hosting and data-centre networks, from the IP-to-ASN data set shipped in @ip-location-db/asn
 * (RouteViews and DB-IP, CC BY 4.0; attribution in docs/architecture.md). Nothing is downloaded at run time.
 * A network counts as hosting when its autonomous system is one of the cloud and hosting providers
 * below, or the AS organisation names itself a hosting, VPS, data-centre or colocation business.
 */
export const HOSTING_ASNS: ReadonlySet<number> = new Set([
  16509,
  14618,
  8987, // Amazon (AWS)
  15169,
  396982,
  19527,
  36040, // Google (Cloud)
  8075,
  8068,
  8069,
  8070, // Microsoft (Azure)
  31898, // Oracle Cloud
  14061, // DigitalOcean
  16276, // OVH
  24940,
  213230, // Hetzner
  63949, // Akamai Connected Cloud (Linode)
  20473, // Vultr (Choopa)
  45102,
  37963, // Alibaba Cloud
  132203,
  45090, // Tencent Cloud
  12876, // Scaleway
  51167, // Contabo
  60781,
  16265,
  28753, // Leaseweb
  8560, // IONOS
  47583, // Hostinger
  9009, // M247
  40676, // Psychz
  8100, // QuadraNet
  36352, // ColoCrossing
  60068, // Datacamp (CDN77)
  26496,
  398101, // GoDaddy
  19994,
  27357, // Rackspace
  54825, // Equinix Metal
  36351, // IBM Cloud (SoftLayer)
  7979, // Servers.com
  21859, // Zenlayer
  49505, // Selectel
  9123, // Timeweb
  36007, // Kamatera
  62567,
  64050, // DigitalOcean, BGP.net hosting ranges
]);

const HOSTING_NAME =
  /\b(hosting|vps|data ?cent(?:er|re)s?|colocation|dedicated servers?|cloud (?:computing|servers?))\b/i;

export interface HostingMatch {
  asn: number;
  org: string;
}

interface Ranges<T> {
  starts: T[];
  ends: T[];
  match: HostingMatch[];
}

/** Parses the "start,end,asn,org" CSV (numeric form), keeping hosting rows only; input is sorted by start. */
function loadRanges<T>(text: string, parse: (s: string) => T): Ranges<T> {
  const out: Ranges<T> = { starts: [], ends: [], match: [] };
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    const line = text.slice(pos, end);
    pos = end + 1;
    const c1 = line.indexOf(",");
    const c2 = line.indexOf(",", c1 + 1);
    const c3 = line.indexOf(",", c2 + 1);
    if (c1 < 0 || c2 < 0 || c3 < 0) continue;
    const asn = Number(line.slice(c2 + 1, c3));
    const org = line.slice(c3 + 1).replace(/^"|"$/g, "");
    if (!HOSTING_ASNS.has(asn) && !HOSTING_NAME.test(org)) continue;
    out.starts.push(parse(line.slice(0, c1)));
    out.ends.push(parse(line.slice(c1 + 1, c2)));
    out.match.push({ asn, org });
  }
  return out;
}

function find<T>(r: Ranges<T>, x: T): HostingMatch | undefined {
  let lo = 0;
  let hi = r.starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((r.starts[mid] as T) <= x) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found >= 0 && x <= (r.ends[found] as T) ? r.match[found] : undefined;
}

export class HostingNetworks {
  private constructor(
    private readonly v4: Ranges<number>,
    private readonly v6: Ranges<bigint>,
  ) {}

  /** Reads the data set from the installed package (about 0.3 s; done once at start-up). */
  static load(): HostingNetworks {
    const require = createRequire(import.meta.url);
    const dir = require.resolve("@ip-location-db/asn/package.json").replace(/package\.json$/, "");
    return new HostingNetworks(
      loadRanges(readFileSync(`${dir}asn-ipv4-num.csv`, "utf8"), Number),
      loadRanges(readFileSync(`${dir}asn-ipv6-num.csv`, "utf8"), BigInt),
    );
  }

  /** A set with no networks: hosting detection off (tests that do not need it skip the load). */
  static empty(): HostingNetworks {
    return new HostingNetworks({ starts: [], ends: [], match: [] }, { starts: [], ends: [], match: [] });
  }

  get size(): number {
    return this.v4.starts.length + this.v6.starts.length;
  }

  /** The hosting provider of an address (for a truncated network, of its first address). */
  lookup(addr: ipaddr.IPv4 | ipaddr.IPv6): HostingMatch | undefined {
    if (addr.kind() === "ipv4") {
      const [a, b, c, d] = (addr as ipaddr.IPv4).octets as [number, number, number, number];
      return find(this.v4, ((a * 256 + b) * 256 + c) * 256 + d);
    }
    let n = 0n;
    for (const part of (addr as ipaddr.IPv6).parts) n = (n << 16n) | BigInt(part);
    return find(this.v6, n);
  }
}

/** The reason codes of this signal's findings, with their category. */
const CODES = { hosting_network: "network" } as const satisfies Record<string, ReasonCategory>;

export const hostingNetworkSignal: Signal<keyof typeof CODES> = {
  name: "hosting network",
  codes: CODES,
  explainedByDeclaredAgent: true,
  findings: ({ hosting, model: { weights: w } }): Finding[] =>
    hosting
      ? [
          {
            id: "hosting_network",
            logOdds: w.hostingNetwork,
            reason: `The network belongs to a hosting or cloud provider (AS${hosting.asn} ${hosting.org}), not a consumer ISP.`,
          },
        ]
      : [],
};
