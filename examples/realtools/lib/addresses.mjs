// Client networks for the signups: one /24 per signup, drawn from consumer ISPs' address space (never
// a hosting or cloud provider), read from the IP-to-ASN data set Warden itself ships
// (@ip-location-db/asn), so each pick is checked against the same data verify reads.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** Residential broadband ASNs (cable, DSL and fibre for homes), US and Europe. */
export const RESIDENTIAL_ASNS = new Map([
  [7922, "Comcast"],
  [20115, "Charter"],
  [22773, "Cox"],
  [6167, "Verizon Wireless"],
  [3320, "Deutsche Telekom"],
  [2856, "BT"],
  [3215, "Orange"],
  [5089, "Virgin Media"],
  [3352, "Telefonica de Espana"],
  [812, "Rogers"],
]);

/** A small deterministic generator (mulberry32): the same seed gives the same networks. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const toText = (n) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");

/**
 * Returns `next()`: a fresh client address each call, each in a /24 no earlier call used, inside a
 * range the data set attributes to one of RESIDENTIAL_ASNS.
 */
export function residentialAddresses(seed = 30) {
  const require = createRequire(import.meta.url);
  const file = require.resolve("@ip-location-db/asn/asn-ipv4-num.csv");
  /** @type {{ start: number, end: number, asn: number }[]} */
  const ranges = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [start, end, asn] = line.split(",", 3);
    const n = Number(asn);
    if (!RESIDENTIAL_ASNS.has(n)) continue;
    const s = Number(start);
    const e = Number(end);
    // Whole /24s only (a range that starts or ends inside a /24 shares it with someone else).
    const first = Math.ceil(s / 256);
    const last = Math.floor((e + 1) / 256) - 1;
    if (last >= first) ranges.push({ start: first, end: last, asn: n });
  }
  if (ranges.length === 0) throw new Error("no residential ranges found in @ip-location-db/asn");
  // Weighted by size: a pick lands in the large consumer blocks, as most homes do.
  const cumulative = [];
  let total = 0;
  for (const r of ranges) {
    total += r.end - r.start + 1;
    cumulative.push(total);
  }
  const rand = random(seed);
  const used = new Set();
  return {
    next() {
      for (;;) {
        const at = Math.floor(rand() * total);
        let lo = 0;
        let hi = cumulative.length - 1;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (cumulative[mid] > at) hi = mid;
          else lo = mid + 1;
        }
        const r = ranges[lo];
        const net = r.start + Math.floor(rand() * (r.end - r.start + 1));
        if (used.has(net)) continue;
        used.add(net);
        return {
          address: toText(net * 256 + 2 + Math.floor(rand() * 252)),
          isp: RESIDENTIAL_ASNS.get(r.asn),
        };
      }
    },
  };
}
