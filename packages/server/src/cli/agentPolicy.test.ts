import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import fs from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliSandbox, runWarden } from "../testing/cliSandbox.js";
import { parseAgentJwks } from "../webBotAuth/agentKeys.js";
import { DIRECTORY_PATH } from "../webBotAuth/keyDirectory.js";

const { dir, env } = cliSandbox();
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
    const add = await runWarden(env, [
      "agent",
      "add",
      "--operator",
      "Example Bot",
      "--signature-agent",
      "https://signature-agent.test",
      "--jwks",
      jwks,
    ]);
    expect(add).toMatchObject({ code: 0 });
    expect(add.stdout).toContain(ED_THUMBPRINT);
    const list = JSON.parse((await runWarden(env, ["agent", "list", "--json"])).stdout) as unknown[];
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
    const clash = await runWarden(env, [
      "agent",
      "add",
      "--operator",
      "Other",
      "--signature-agent",
      "https://other.test",
      "--jwks",
      jwks,
    ]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(
      new RegExp(
        `key ${ED_THUMBPRINT} \\(from .*same\\.jwks\\.json\\) is already registered for Example Bot`,
      ),
    );

    const priv = file("private.jwks.json", {
      keys: [{ ...ED_PUBLIC, d: "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU" }],
    });
    const leaked = await runWarden(env, [
      "agent",
      "add",
      "--operator",
      "Leaky",
      "--signature-agent",
      "https://leaky.test",
      "--jwks",
      priv,
    ]);
    expect(leaked.code).toBe(1);
    expect(leaked.stderr).toMatch(/private key material/);

    const http = await runWarden(env, [
      "agent",
      "add",
      "--operator",
      "Plain",
      "--signature-agent",
      "http://plain.test",
      "--jwks",
      jwks,
    ]);
    expect(http.code).toBe(2);
    expect(http.stderr).toMatch(/https URL/);

    const none = await runWarden(env, [
      "agent",
      "add",
      "--operator",
      "Nothing",
      "--signature-agent",
      "https://n.test",
    ]);
    expect(none.code).toBe(2);
    const hmac = file("hmac.jwks.json", { keys: [{ kty: "oct", k: "c2VjcmV0" }] });
    expect(
      (
        await runWarden(env, [
          "agent",
          "add",
          "--operator",
          "H",
          "--signature-agent",
          "https://h.test",
          "--jwks",
          hmac,
        ])
      ).code,
    ).toBe(1);
  });

  it("removes an operator, and says so when there is none", async () => {
    expect((await runWarden(env, ["agent", "remove", "--operator", "Example Bot"])).code).toBe(0);
    const again = await runWarden(env, ["agent", "remove", "--operator", "Example Bot"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no agent operator/);
  });
});

describe("warden agent: a key names one operator, whichever way it enters", () => {
  /** Key directories on loopback HTTPS (a throwaway certificate), one per operator, serving `keys`. */
  const directories: { server: Server; origin: string; keys: object[] }[] = [];
  let directoryEnv: NodeJS.ProcessEnv;
  /** The directories' throwaway certificate, which the CLI run trusts (the binary: NODE_EXTRA_CA_CERTS). */
  let directoryCa: string;
  const key = async () => {
    const jwk = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
    const parsed = await parseAgentJwks({ keys: [jwk] });
    if (!parsed.ok || !parsed.keys[0]) throw new Error("no key");
    return { jwk, thumbprint: parsed.keys[0].thumbprint };
  };
  const add = (operator: string, ...source: string[]) =>
    runWarden(directoryEnv, ["agent", "add", "--operator", operator, ...source], { directoryCa });
  const listed = async () =>
    (JSON.parse((await runWarden(env, ["agent", "list", "--json"])).stdout) as { operator: string }[]).map(
      (a) => a.operator,
    );

  beforeAll(async () => {
    const keyFile = path.join(dir, "directory-key.pem");
    const certFile = path.join(dir, "directory-cert.pem");
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=localhost"],
        ...["-addext", "subjectAltName=IP:127.0.0.1"],
      ],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 3; i++) {
      const entry = { server: undefined as unknown as Server, origin: "", keys: [] as object[] };
      entry.server = createServer(
        { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) },
        (req, res) => {
          if (req.url !== DIRECTORY_PATH) return void res.writeHead(404).end();
          res.writeHead(200, { "content-type": "application/http-message-signatures-directory+json" });
          res.end(JSON.stringify({ keys: entry.keys }));
        },
      );
      await new Promise<void>((r) => entry.server.listen(0, "127.0.0.1", r));
      entry.origin = `https://127.0.0.1:${(entry.server.address() as AddressInfo).port}`;
      directories.push(entry);
    }
    // The CLI run trusts the throwaway certificate and may reach loopback (tests only).
    directoryCa = fs.readFileSync(certFile, "utf8");
    directoryEnv = { ...env, WARDEN_AGENT_DIRECTORY_ALLOW_PRIVATE: "true" };
  });
  afterAll(() => {
    for (const d of directories) d.server.close();
  });
  const at = (i: number) => {
    const d = directories[i];
    if (!d) throw new Error(`no directory ${i}`);
    return d;
  };

  it("--fetch-directory whose directory serves another operator's registered key: refused, nothing stored", async () => {
    const genuine = await key();
    const jwks = file("sigagent.jwks.json", { keys: [genuine.jwk] });
    expect((await add("sigagent", "--signature-agent", "https://sigagent.test", "--jwks", jwks)).code).toBe(
      0,
    );
    at(0).keys = [genuine.jwk];
    const squat = await add("aaa-squatter", "--signature-agent", at(0).origin, "--fetch-directory");
    expect(squat.code).toBe(1);
    expect(squat.stderr).toMatch(
      `key ${genuine.thumbprint} (served by its key directory) is already registered for sigagent; a key names one operator, nothing was registered`,
    );
    expect(await listed()).not.toContain("aaa-squatter");
  });

  it("--jwks with a key another operator's directory serves, or a second directory serving it: refused", async () => {
    const served = await key();
    at(1).keys = [served.jwk];
    expect((await add("Directory Bot", "--signature-agent", at(1).origin, "--fetch-directory")).code).toBe(0);

    const jwks = file("copied.jwks.json", { keys: [served.jwk] });
    const copied = await add("Copycat", "--signature-agent", "https://copycat.test", "--jwks", jwks);
    expect(copied.code).toBe(1);
    expect(copied.stderr).toMatch(`is served by the key directory of Directory Bot`);

    at(2).keys = [served.jwk];
    const mirrored = await add("Mirror", "--signature-agent", at(2).origin, "--fetch-directory");
    expect(mirrored.code).toBe(1);
    expect(mirrored.stderr).toMatch(
      `key ${served.thumbprint} (served by its key directory) is served by the key directory of Directory Bot`,
    );
    expect(await listed()).not.toContain("Copycat");
    expect(await listed()).not.toContain("Mirror");
  });

  it("another operator's directory that does not answer is named in a warning; the owner may re-add its key", async () => {
    at(1).server.closeAllConnections();
    const stopped = new Promise<void>((r) => at(1).server.close(() => r()));
    await stopped;
    const fresh = await key();
    const jwks = file("fresh.jwks.json", { keys: [fresh.jwk] });
    const res = await add("Newcomer", "--signature-agent", "https://newcomer.test", "--jwks", jwks);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(
      /warning: the key directory of Directory Bot did not answer .*so its keys were not compared/,
    );
    // Replacing one's own entry with the same key is no clash.
    expect((await add("Newcomer", "--signature-agent", "https://newcomer.test", "--jwks", jwks)).code).toBe(
      0,
    );
  });
});

describe("warden policy", () => {
  it("stores validated documents as numbered versions and prints the current one", async () => {
    // Raw PII on: its email domain list can match (policy set refuses domains for a hashed tenant).
    expect((await runWarden(env, ["tenant", "create", "acme", "--raw-pii"])).code).toBe(0);
    const empty = await runWarden(env, ["policy", "get", "--tenant", "acme"]);
    expect(empty).toMatchObject({ code: 0, stdout: "{}\n" });
    expect(empty.stderr).toMatch(/defaults apply/);

    const doc = {
      deny: { networks: ["198.51.100.0/24"], emailDomains: ["spam.test"] },
      actions: { api_key: { verifiedAgents: "allow" } },
      velocity: { ip_network: { perHour: 10 } },
      challenge: { powDifficulty: { default: 5 } },
    };
    const first = await runWarden(env, ["policy", "set", "--tenant", "acme", "--file", file("p1.json", doc)]);
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toMatch(/stored policy v1 for tenant acme/);
    expect(
      (await runWarden(env, ["policy", "set", "--tenant", "acme", "--file", file("p2.json", {})])).stdout,
    ).toMatch(/v2/);
    const got = await runWarden(env, ["policy", "get", "--tenant", "acme"]);
    expect(JSON.parse(got.stdout)).toEqual({});
    expect(got.stderr).toMatch(/policy v2/);
  });

  it("refuses an invalid document with every problem named, and stores nothing", async () => {
    const bad = {
      deny: { networks: ["not-a-network"], emailDomains: ["Not A Domain"] },
      challenge: { powDifficulty: { default: 3, severe: 4 } },
    };
    const res = await runWarden(env, ["policy", "set", "--tenant", "acme", "--file", file("bad.json", bad)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/deny\.networks\[0\]/);
    expect(res.stderr).toMatch(/deny\.emailDomains\[0\]/);
    expect(res.stderr).toMatch(/powDifficulty\.default: 3 is below the floor of 4/);
    const unknown = await runWarden(env, [
      "policy",
      "set",
      "--tenant",
      "acme",
      "--file",
      file("u.json", { allowlist: [] }),
    ]);
    expect(unknown.code).toBe(1);
    const notJson = await runWarden(env, [
      "policy",
      "set",
      "--tenant",
      "acme",
      "--file",
      file("n.json", "{oops"),
    ]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/cannot read .* as JSON/);
    expect((await runWarden(env, ["policy", "get", "--tenant", "acme"])).stderr).toMatch(/policy v2/);
  });

  it("names an unknown tenant", async () => {
    const res = await runWarden(env, ["policy", "set", "--tenant", "ghost", "--file", file("g.json", {})]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no tenant "ghost"/);
  });
});
