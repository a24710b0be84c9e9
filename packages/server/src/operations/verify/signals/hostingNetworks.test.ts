import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { HostingNetworks } from "./hostingNetworks.js";

describe("hosting networks from the shipped IP-to-ASN data set", () => {
  const hosting = HostingNetworks.load();

  it("loads a substantial set of hosting ranges", () => {
    expect(hosting.size).toBeGreaterThan(1000);
  });

  it.each([
    ["3.5.140.0", 16509], // AWS
    ["34.64.0.0", 396982], // Google Cloud
    ["5.9.0.0", 24940], // Hetzner
    ["2a01:4f8::", 24940], // Hetzner IPv6
  ])("%s is a hosting network (AS%i)", (ip, asn) => {
    expect(hosting.lookup(ipaddr.parse(ip))?.asn).toBe(asn);
  });

  it.each(["81.2.69.160", "2001:db8::1", "192.168.1.1"])("%s is not a hosting network", (ip) => {
    expect(hosting.lookup(ipaddr.parse(ip))).toBeUndefined();
  });

  it("an empty set finds nothing", () => {
    expect(HostingNetworks.empty().lookup(ipaddr.parse("3.5.140.0"))).toBeUndefined();
  });
});
