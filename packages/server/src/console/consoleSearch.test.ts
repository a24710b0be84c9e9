import { describe, expect, it } from "vitest";
import { emailHash, readSearch, truncateNetwork } from "../../../console/src/search.js";
import { emailHash as serverEmailHash } from "../operations/verify/signals/email.js";
import { truncateIp } from "../operations/verify/signals/ip.js";

describe("the events search box", () => {
  it("hashes an email address exactly as the server does (trim, lower case, SHA-256 hex)", async () => {
    for (const address of ["Alice@Example.com", "  bob+tag@example.org ", "zoë@exämple.de"]) {
      expect(await emailHash(address)).toBe(serverEmailHash(address));
    }
  });

  it("cuts an address to the network the server keeps, which the server reads as the same network", () => {
    for (const ip of ["203.0.113.77", "2001:db8:abcd:12::1", "::ffff:10.1.2.3", "2001:db8::/64", "fe80::1"]) {
      const network = truncateNetwork(ip);
      expect(typeof network).toBe("string");
      expect(truncateIp(network as string)).toBe(truncateIp(ip));
    }
    expect(truncateNetwork("10.0.0.0/8")).toBe("wide");
    expect(truncateNetwork("2001:db8::/32")).toBe("wide");
    expect(truncateNetwork("300.1.1.1")).toBeUndefined();
    expect(truncateNetwork("1:2:3")).toBeUndefined();
  });

  it("reads each kind of term; anything else is a session", () => {
    expect(readSearch(" a@b.co ")).toEqual({ kind: "email", address: "a@b.co" });
    expect(readSearch("A".repeat(64))).toEqual({ kind: "emailHash", hash: "a".repeat(64) });
    expect(readSearch("evt_01ABC")).toEqual({ kind: "event", eventId: "evt_01ABC" });
    expect(readSearch("198.51.100.9")).toEqual({ kind: "network", network: "198.51.100.0/24" });
    expect(readSearch("10.0.0.0/8")).toEqual({ kind: "wideNetwork", text: "10.0.0.0/8" });
    expect(readSearch("sess-42")).toEqual({ kind: "session", session: "sess-42" });
    expect(readSearch("   ")).toEqual({ kind: "empty" });
    // What a mail client copies names one address; anything else with an "@" is never sent as a
    // session (it would put addresses in the URL and the request).
    expect(readSearch("mailto:Jane@X.com")).toEqual({ kind: "email", address: "Jane@X.com" });
    expect(readSearch('"Jane Doe" <jane@x.com>')).toEqual({ kind: "email", address: "jane@x.com" });
    for (const text of ["jane@x.com, bob@y.com", "jane @x.com", "a@b@c", "<a@b.c> <d@e.f>"]) {
      expect(readSearch(text), text).toEqual({ kind: "notOneAddress" });
    }
  });
});
