import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { compilePolicy, DEFAULT_TENANT_POLICY, matchNetwork, storedRetentionDays } from "./tenantPolicy.js";

const compiled = (doc: unknown) => {
  const r = compilePolicy(doc, "v1");
  if (!r.ok) throw new Error(r.errors.join("; "));
  return r.policy;
};
const net = (text: string) => {
  const [addr, prefix] = ipaddr.parseCIDR(text);
  return { addr, prefix };
};

describe("tenant policy documents", () => {
  it("the default: no lists, verified agents scored, base difficulties 4/5/6", () => {
    expect(DEFAULT_TENANT_POLICY.version).toBe("default");
    expect(DEFAULT_TENANT_POLICY.verifiedAgents("signup")).toBe("score");
    expect(DEFAULT_TENANT_POLICY.powDifficulty).toEqual({ default: 4, elevated: 5, severe: 6 });
  });

  it("difficulties may be raised and the order is kept when only a lower tier is raised", () => {
    expect(compiled({ challenge: { powDifficulty: { default: 6 } } }).powDifficulty).toEqual({
      default: 6,
      elevated: 6,
      severe: 6,
    });
    expect(compiled({ challenge: { powDifficulty: { elevated: 7 } } }).powDifficulty).toEqual({
      default: 4,
      elevated: 7,
      severe: 7,
    });
  });

  it("difficulties never go below the documented floors, nor out of order", () => {
    for (const powDifficulty of [{ default: 3 }, { severe: 5 }, { elevated: 8, severe: 6 }]) {
      const r = compilePolicy({ challenge: { powDifficulty } }, "v1");
      expect(r.ok, JSON.stringify(powDifficulty)).toBe(false);
    }
  });

  it("device attestation: an RP id and secure origins on it; none by default, direct on request", () => {
    expect(DEFAULT_TENANT_POLICY.deviceAttestation).toBeUndefined();
    expect(
      compiled({
        challenge: { deviceAttestation: { rpId: "Example.com", origins: ["https://app.example.com"] } },
      }).deviceAttestation,
    ).toEqual({ rpId: "example.com", origins: ["https://app.example.com"], attestation: "none" });
    expect(
      compiled({
        challenge: {
          deviceAttestation: { rpId: "localhost", origins: ["http://localhost:3000"], attestation: "direct" },
        },
      }).deviceAttestation?.attestation,
    ).toBe("direct");
    for (const deviceAttestation of [
      { rpId: "example.com", origins: ["http://example.com"] },
      { rpId: "example.com", origins: ["https://example.org"] },
      { rpId: "example.com", origins: ["https://evilexample.com"] },
      { rpId: "example.com", origins: ["https://example.com/path"] },
      { rpId: "https://example.com", origins: ["https://example.com"] },
      { rpId: "example.com", origins: [] },
      { rpId: "example.com", origins: ["https://example.com"], attestation: "enterprise" },
    ]) {
      const r = compilePolicy({ challenge: { deviceAttestation } }, "v1");
      expect(r.ok, JSON.stringify(deviceAttestation)).toBe(false);
    }
  });

  it("per-action verified-agent rules, and velocity limits that must be consistent", () => {
    const p = compiled({
      actions: { api_key: { verifiedAgents: "allow" } },
      velocity: { session: { perMinute: 2 } },
    });
    expect(p.verifiedAgents("api_key")).toBe("allow");
    expect(p.verifiedAgents("signup")).toBe("score");
    expect(compilePolicy({ velocity: { ip_network: { perMinute: 50, perHour: 10 } } }, "v1")).toMatchObject({
      ok: false,
      errors: ["velocity.ip_network: perMinute exceeds perHour"],
    });
    expect(compilePolicy({ actions: { signup: { verifiedAgents: "maybe" } } }, "v1").ok).toBe(false);
  });

  it("network lists match a truncated network inside them, never a wider one", () => {
    const p = compiled({ deny: { networks: ["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"] } });
    expect(matchNetwork(p.deny.networks, net("203.0.113.0/24"))?.text).toBe("203.0.113.0/24");
    expect(matchNetwork(p.deny.networks, net("203.0.0.0/16"))).toBeUndefined();
    expect(matchNetwork(p.deny.networks, net("2001:db8:5::/48"))?.text).toBe("2001:db8::/32");
    // A single address on the list can only match a full address (raw IP with the tenant's opt-in).
    expect(matchNetwork(p.deny.networks, net("198.51.100.0/24"))).toBeUndefined();
    expect(matchNetwork(p.deny.networks, net("198.51.100.7/32"))?.text).toBe("198.51.100.7");
  });

  it("IPv4-mapped IPv6 rules are read as the IPv4 they carry (verify reads addresses that way)", () => {
    const p = compiled({ deny: { networks: ["::ffff:198.51.100.5", "::FFFF:203.0.113.0/120"] } });
    expect(p.deny.networks.map((r) => r.range.map(String))).toEqual([
      ["198.51.100.5", "32"],
      ["203.0.113.0", "24"],
    ]);
    // Matched against what verify reads from a raw or truncated IPv4 subject; named as written.
    expect(matchNetwork(p.deny.networks, net("198.51.100.5/32"))?.text).toBe("::ffff:198.51.100.5");
    expect(matchNetwork(p.deny.networks, net("203.0.113.0/24"))?.text).toBe("::FFFF:203.0.113.0/120");
    expect(matchNetwork(p.deny.networks, net("203.0.112.0/24"))).toBeUndefined();
  });

  it("an IPv4-mapped network shorter than /96 is refused with the reason", () => {
    expect(compilePolicy({ allow: { networks: ["::ffff:0:0/80"] } }, "v1")).toEqual({
      ok: false,
      errors: [
        'allow.networks[0]: "::ffff:0:0/80" is an IPv4-mapped network shorter than /96, which reaches beyond IPv4: write it as an IPv4 network',
      ],
    });
    expect(compiled({ allow: { networks: ["::ffff:0:0/96"] } }).allow.networks[0]?.range.map(String)).toEqual(
      ["0.0.0.0", "0"],
    );
  });

  it("an IPv4 part not written as four decimal numbers is refused: 010.0.0.0/8 would be read as octal 8.0.0.0/8", () => {
    const entries = ["010.0.0.0/8", "203.0.113.05", "0xcb.0.113.0/24", "203.113.0/24", "::ffff:0313.0.113.5"];
    const r = compilePolicy({ deny: { networks: entries } }, "v1");
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.errors).toEqual(
      entries.map(
        (e, i) =>
          `deny.networks[${i}]: ${JSON.stringify(e)} is not written as four decimal numbers (no leading zeros, octal or hex parts)`,
      ),
    );
    expect(
      compiled({ deny: { networks: ["10.0.0.0/8", "0.0.0.0/0", "::ffff:203.0.113.5"] } }).deny.networks,
    ).toHaveLength(3);
  });

  it("agent operator names are trimmed, as warden agent add trims them; a blank one is refused", () => {
    expect([
      ...compiled({ deny: { agentOperators: [" sigagent ", "Bad Bot Inc."] } }).deny.agentOperators,
    ]).toEqual(["sigagent", "Bad Bot Inc."]);
    expect(compilePolicy({ allow: { agentOperators: ["  "] } }, "v1")).toEqual({
      ok: false,
      errors: ["allow.agentOperators[0]: is blank (name a registered operator)"],
    });
  });

  it("webBotAuthHosts: unset binds nothing; set, its hosts are compiled and bad entries named", () => {
    expect(DEFAULT_TENANT_POLICY.webBotAuthHosts).toBeUndefined();
    const hosts = compiled({ webBotAuthHosts: ["Shop.Example.", "*.shop.example"] }).webBotAuthHosts;
    expect([...(hosts?.exact ?? [])]).toEqual(["shop.example"]);
    expect(hosts?.suffixes).toEqual([".shop.example"]);
    expect(compilePolicy({ webBotAuthHosts: ["shop.example:443", "*.com"] }, "v1")).toEqual({
      ok: false,
      errors: [
        'webBotAuthHosts[0]: "shop.example:443" has a port: list the host name alone (every port matches)',
        'webBotAuthHosts[1]: "*.com" would match a whole top-level domain: name at least two labels after *.',
      ],
    });
    expect(compilePolicy({ webBotAuthHosts: [] }, "v1").ok).toBe(false);
  });

  it('retentionDays: whole days from 7 to 36500, or "forever"; unset, the deployment\'s WARDEN_RETENTION_DAYS', () => {
    expect(DEFAULT_TENANT_POLICY.retentionDays).toBeUndefined();
    expect(compiled({ retentionDays: 30 }).retentionDays).toBe(30);
    expect(compiled({ retentionDays: "forever" }).retentionDays).toBe("forever");
    for (const retentionDays of [6, 36_501, 30.5, "30", "never", null]) {
      expect(compilePolicy({ retentionDays }, "v1").ok).toBe(false);
    }
    // What retention reads of a stored document, without compiling the rest.
    expect(storedRetentionDays(JSON.stringify({ retentionDays: 30, allow: { networks: ["x"] } }))).toBe(30);
    expect(storedRetentionDays(JSON.stringify({ retentionDays: "forever" }))).toBe("forever");
    for (const document of ["{}", "null", "not json", JSON.stringify({ retentionDays: 3 })]) {
      expect(storedRetentionDays(document)).toBeUndefined();
    }
  });
});
