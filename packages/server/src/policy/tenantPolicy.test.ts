import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { compilePolicy, DEFAULT_TENANT_POLICY, matchNetwork } from "./tenantPolicy.js";

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

  it("difficulties never go below the spec's floors, nor out of order", () => {
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
});
