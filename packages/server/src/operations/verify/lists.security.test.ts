import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliSandbox, runWarden } from "../../testing/cliSandbox.js";
import { bearer, makeTestApp, type TestApp } from "../../testing/harness.js";
import { emailHash } from "./signals/email.js";

/**
 * The tenant's lists match what they say (docs/api.md, "Tenant policy"): a listed address matches
 * every variant of its mailbox, and a network narrower than what verify reads of an attempt is refused
 * where it could never match and warned about where it matches only raw addresses.
 */

let t: TestApp;
let apiKey: string;

beforeAll(async () => {
  t = await makeTestApp();
  await t.tenant("lists", { rawPii: true });
  await t.store.policies.put(
    "lists",
    JSON.stringify({
      deny: {
        emailHashes: [emailHash("banned@gmail.com")],
        networks: ["81.30.1.0/25"],
        emailDomains: ["spam.example", "bücher.example", "xn--e1afmkfd.com"],
      },
    }),
    Date.now(),
  );
  apiKey = (await t.key("lists")).apiKey;
});
afterAll(async () => {
  await t?.close();
});

let n = 0;
async function verify(subject: Record<string, unknown>) {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/verify",
    headers: bearer(apiKey),
    payload: { action: "signup", session: `lists-${++n}`, subject },
  });
  expect(res.statusCode).toBe(200);
  return res.json() as { decision: string; reasons: string[] };
}

describe("an email deny list", () => {
  it("denies the listed address and every variant of its mailbox (+tag, Gmail's dots, googlemail.com, case)", async () => {
    for (const email of [
      "banned@gmail.com",
      "banned+x@gmail.com",
      "b.anned@gmail.com",
      "B.Anned+promo@GoogleMail.com",
      "banned@gmail.com.",
      '"banned"@gmail.com',
    ]) {
      const v = await verify({ email, ipTrunc: "198.51.100.0/24" });
      expect({ email, decision: v.decision }).toEqual({ email, decision: "deny" });
    }
  });

  it("leaves another mailbox alone", async () => {
    const v = await verify({ email: "banned2@gmail.com", ipTrunc: "198.51.100.0/24" });
    expect(v.reasons.join(" ")).not.toMatch(/deny list/i);
  });
});

describe("an email domain deny list", () => {
  it("denies the listed domain and its subdomains in every spelling a mail server delivers to: case, the root's dot, Unicode, decomposed Unicode, Punycode", async () => {
    for (const email of [
      "x@spam.example",
      "x@SPAM.example.",
      "x@sub.spam.example.",
      "x@bücher.example",
      "x@bu\u0308cher.example",
      "x@xn--bcher-kva.example",
      "x@sub.пример.com",
      "x@пример.com.",
    ]) {
      const v = await verify({ email, ipTrunc: "198.51.100.0/24" });
      expect({ email, decision: v.decision, reasons: v.reasons.join(" ") }).toMatchObject({
        email,
        decision: "deny",
        reasons: expect.stringMatching(/email domain/),
      });
    }
  });

  it("leaves another domain alone", async () => {
    const v = await verify({ email: "x@spam.example.org", ipTrunc: "198.51.100.0/24" });
    expect(v.reasons.join(" ")).not.toMatch(/email domain/);
  });
});

describe("a network narrower than /24 or /48", () => {
  it("matches the raw address it contains", async () => {
    const inside = await verify({ ip: "81.30.1.7" });
    expect(inside.decision).toBe("deny");
    const outside = await verify({ ip: "81.30.1.200" });
    expect(outside.reasons.join(" ")).not.toMatch(/81\.30\.1\.0\/25/);
  });

  describe("warden policy set", () => {
    const { dir, env } = cliSandbox();
    const file = path.join(dir, "policy.json");
    beforeAll(async () => {
      fs.writeFileSync(
        file,
        JSON.stringify({
          deny: { networks: ["81.30.1.0/25", "81.30.2.7", "2001:db8:1:2::/64", "203.0.113.0/24"] },
        }),
      );
      expect((await runWarden(env, ["tenant", "create", "hashed"])).code).toBe(0);
      expect((await runWarden(env, ["tenant", "create", "raw", "--raw-pii"])).code).toBe(0);
    });

    it("refuses them for a tenant without raw addresses (they could never match), naming each", async () => {
      const run = await runWarden(env, ["policy", "set", "--tenant", "hashed", "--file", file]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('deny.networks[0]: "81.30.1.0/25" is narrower than /24');
      expect(run.stderr).toContain('deny.networks[1]: "81.30.2.7" is narrower than /24');
      expect(run.stderr).toContain('deny.networks[2]: "2001:db8:1:2::/64" is narrower than /48');
      expect(run.stderr).not.toContain("203.0.113.0/24");
      expect((await runWarden(env, ["policy", "get", "--tenant", "hashed"])).stdout.trim()).toBe("{}");
    });

    it("refuses email domains for a tenant without raw addresses (its attempts carry a hash, never a domain)", async () => {
      const domains = path.join(dir, "domains.json");
      fs.writeFileSync(domains, JSON.stringify({ deny: { emailDomains: ["spam.example"] } }));
      const run = await runWarden(env, ["policy", "set", "--tenant", "hashed", "--file", domains]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('deny.emailDomains: "spam.example"');
      expect(run.stderr).toContain("would never match");
      expect((await runWarden(env, ["tenant", "create", "raw-domains", "--raw-pii"])).code).toBe(0);
      const raw = await runWarden(env, ["policy", "set", "--tenant", "raw-domains", "--file", domains]);
      expect(raw.code).toBe(0);
    });

    it("stores them with a warning for a tenant that sends raw addresses", async () => {
      const run = await runWarden(env, ["policy", "set", "--tenant", "raw", "--file", file]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("stored policy v1");
      expect(run.stderr).toMatch(/^warning: .*subject\.ip/);
      expect(run.stderr).toContain('"2001:db8:1:2::/64" is narrower than /48');
    });
  });
});
