import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliSandbox } from "../testing/cliSandbox.js";

const { dir, warden } = cliSandbox();
function file(name: string, content: unknown): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
}

/** The Ed25519 key of the public Web Bot Auth vectors and its RFC 7638 thumbprint. */
const ED_PUBLIC = { kty: "OKP", crv: "Ed25519", x: "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" };
const ED_THUMBPRINT = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";

describe("warden agent", () => {
  it("registers an operator from a JWKS file, keyed by the JWK thumbprint", async () => {
    const jwks = file("agent.jwks.json", { keys: [ED_PUBLIC] });
    const add = await warden(
      "agent",
      "add",
      "--operator",
      "Example Bot",
      "--signature-agent",
      "https://signature-agent.test",
      "--jwks",
      jwks,
    );
    expect(add).toMatchObject({ code: 0 });
    expect(add.stdout).toContain(ED_THUMBPRINT);
    const list = JSON.parse((await warden("agent", "list", "--json")).stdout) as unknown[];
    expect(list).toEqual([
      {
        operator: "Example Bot",
        signatureAgent: "https://signature-agent.test",
        keyids: [ED_THUMBPRINT],
        fetchDirectory: false,
      },
    ]);
  });

  it("refuses a key already registered for another operator, private keys, non-https agents and missing keys", async () => {
    const jwks = file("same.jwks.json", { keys: [ED_PUBLIC] });
    const clash = await warden(
      "agent",
      "add",
      "--operator",
      "Other",
      "--signature-agent",
      "https://other.test",
      "--jwks",
      jwks,
    );
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/already registered for another operator/);

    const priv = file("private.jwks.json", {
      keys: [{ ...ED_PUBLIC, d: "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU" }],
    });
    const leaked = await warden(
      "agent",
      "add",
      "--operator",
      "Leaky",
      "--signature-agent",
      "https://leaky.test",
      "--jwks",
      priv,
    );
    expect(leaked.code).toBe(1);
    expect(leaked.stderr).toMatch(/private key material/);

    const http = await warden(
      "agent",
      "add",
      "--operator",
      "Plain",
      "--signature-agent",
      "http://plain.test",
      "--jwks",
      jwks,
    );
    expect(http.code).toBe(2);
    expect(http.stderr).toMatch(/https URL/);

    const none = await warden("agent", "add", "--operator", "Nothing", "--signature-agent", "https://n.test");
    expect(none.code).toBe(2);
    const hmac = file("hmac.jwks.json", { keys: [{ kty: "oct", k: "c2VjcmV0" }] });
    expect(
      (await warden("agent", "add", "--operator", "H", "--signature-agent", "https://h.test", "--jwks", hmac))
        .code,
    ).toBe(1);
  });

  it("removes an operator, and says so when there is none", async () => {
    expect((await warden("agent", "remove", "--operator", "Example Bot")).code).toBe(0);
    const again = await warden("agent", "remove", "--operator", "Example Bot");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no agent operator/);
  });
});

describe("warden policy", () => {
  it("stores validated documents as numbered versions and prints the current one", async () => {
    expect((await warden("tenant", "create", "acme")).code).toBe(0);
    const empty = await warden("policy", "get", "--tenant", "acme");
    expect(empty).toMatchObject({ code: 0, stdout: "{}\n" });
    expect(empty.stderr).toMatch(/defaults apply/);

    const doc = {
      deny: { networks: ["198.51.100.0/24"], emailDomains: ["spam.test"] },
      actions: { api_key: { verifiedAgents: "allow" } },
      velocity: { ip_network: { perHour: 10 } },
      challenge: { powDifficulty: { default: 5 } },
    };
    const first = await warden("policy", "set", "--tenant", "acme", "--file", file("p1.json", doc));
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toMatch(/stored policy v1 for tenant acme/);
    expect((await warden("policy", "set", "--tenant", "acme", "--file", file("p2.json", {}))).stdout).toMatch(
      /v2/,
    );
    const got = await warden("policy", "get", "--tenant", "acme");
    expect(JSON.parse(got.stdout)).toEqual({});
    expect(got.stderr).toMatch(/policy v2/);
  });

  it("refuses an invalid document with every problem named, and stores nothing", async () => {
    const bad = {
      deny: { networks: ["not-a-network"], emailDomains: ["Not A Domain"] },
      challenge: { powDifficulty: { default: 3, severe: 4 } },
    };
    const res = await warden("policy", "set", "--tenant", "acme", "--file", file("bad.json", bad));
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/deny\.networks\[0\]/);
    expect(res.stderr).toMatch(/deny\.emailDomains\[0\]/);
    expect(res.stderr).toMatch(/powDifficulty\.default: 3 is below the floor of 4/);
    const unknown = await warden(
      "policy",
      "set",
      "--tenant",
      "acme",
      "--file",
      file("u.json", { allowlist: [] }),
    );
    expect(unknown.code).toBe(1);
    const notJson = await warden("policy", "set", "--tenant", "acme", "--file", file("n.json", "{oops"));
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/cannot read .* as JSON/);
    expect((await warden("policy", "get", "--tenant", "acme")).stderr).toMatch(/policy v2/);
  });

  it("names an unknown tenant", async () => {
    const res = await warden("policy", "set", "--tenant", "ghost", "--file", file("g.json", {}));
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no tenant "ghost"/);
  });
});
