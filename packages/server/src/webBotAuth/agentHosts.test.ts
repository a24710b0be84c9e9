import { describe, expect, it } from "vitest";
import { compileAgentHosts, hostListed, parseHostEntry, signedHost } from "./agentHosts.js";

const hosts = (...entries: string[]) => {
  const { hosts, errors } = compileAgentHosts(entries, "webBotAuthHosts");
  if (errors.length > 0) throw new Error(errors.join("; "));
  return hosts;
};

describe("a tenant's Web Bot Auth hosts", () => {
  it("entries are read as a URL reads a host: case, trailing dot, IDN, IP literals", () => {
    expect(parseHostEntry(" Shop.Example. ")).toEqual({ ok: true, host: "shop.example", wildcard: false });
    expect(parseHostEntry("bücher.example")).toEqual({
      ok: true,
      host: "xn--bcher-kva.example",
      wildcard: false,
    });
    expect(parseHostEntry("*.Example.COM")).toEqual({ ok: true, host: "example.com", wildcard: true });
    expect(parseHostEntry("192.0.2.10")).toMatchObject({ ok: true, host: "192.0.2.10" });
    expect(parseHostEntry("2001:DB8::1")).toMatchObject({ ok: true, host: "[2001:db8::1]" });
    expect(parseHostEntry("[2001:db8:0::1]")).toMatchObject({ ok: true, host: "[2001:db8::1]" });
  });

  it("entries with a port, a path, a user, a wildcard on an IP or a whole TLD are refused, each named", () => {
    for (const [entry, why] of [
      ["example.com:443", /has a port/],
      ["[2001:db8::1]:8443", /has a port/],
      ["example.com/path", /is not a host name/],
      ["user@example.com", /is not a host name/],
      ["https://example.com", /has a port|is not a host name/],
      ["*.*.example.com", /is not a host name/],
      ["*.", /is not a host name/],
      ["a..example", /is not a host name/],
      ["exa mple.com", /is not a host name/],
      ["*.192.0.2.1", /wildcard needs a domain name/],
      ["*.com", /whole top-level domain/],
    ] as const) {
      expect(parseHostEntry(entry), entry).toMatchObject({ ok: false, why: expect.stringMatching(why) });
    }
    const { errors } = compileAgentHosts(["ok.example", "bad:1"], "webBotAuthHosts");
    expect(errors).toEqual([
      'webBotAuthHosts[1]: "bad:1" has a port: list the host name alone (every port matches)',
    ]);
  });

  it("*. matches subdomains at any depth, not the name itself nor a name that merely ends alike", () => {
    const list = hosts("shop.example", "*.example.com");
    expect(hostListed(list, "shop.example")).toBe(true);
    expect(hostListed(list, "www.shop.example")).toBe(false);
    expect(hostListed(list, "a.example.com")).toBe(true);
    expect(hostListed(list, "a.b.example.com")).toBe(true);
    expect(hostListed(list, "example.com")).toBe(false);
    expect(hostListed(list, "evilexample.com")).toBe(false);
    expect(hostListed(list, "example.com.evil")).toBe(false);
  });

  it("the signed host: :authority over host, lower case, no port, no trailing dot, punycode", () => {
    expect(signedHost({ host: "Shop.Example:8443" })).toBe("shop.example");
    expect(signedHost({ host: "shop.example.", ":authority": "other.example" })).toBe("other.example");
    expect(signedHost({ host: "shop.example." })).toBe("shop.example");
    expect(signedHost({ host: "bücher.example" })).toBe("xn--bcher-kva.example");
    expect(signedHost({ host: "[2001:DB8::1]:443" })).toBe("[2001:db8::1]");
    expect(signedHost({})).toBeUndefined();
    expect(signedHost({ host: "exa mple.com" })).toBeUndefined();
  });
});
