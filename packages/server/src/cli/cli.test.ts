import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { powDigest } from "../operations/challenge/methods/proofOfWork/proofOfWork.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { cliSandbox, runWarden } from "../testing/cliSandbox.js";
import { testEvent } from "../testing/harness.js";
import { runWardenBinary } from "../testing/wardenProcess.js";

const { dir, env } = cliSandbox();

// The commands run in this process (cliSandbox); the last tests run the real binary.
describe("warden CLI", () => {
  it("creates a tenant once and refuses a duplicate", async () => {
    expect(await runWarden(env, ["tenant", "create", "acme", "--raw-pii"])).toMatchObject({
      code: 0,
      stdout: "created tenant acme\n",
    });
    const again = await runWarden(env, ["tenant", "create", "acme"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
    const list = JSON.parse((await runWarden(env, ["tenant", "list", "--json"])).stdout) as {
      id: string;
      rawPii: boolean;
    }[];
    expect(list).toEqual([expect.objectContaining({ id: "acme", rawPii: true, logOnly: false })]);
  });

  it("key create --json prints exactly {keyId, apiKey, tenantId, scopes} on stdout", async () => {
    const res = await runWarden(env, [
      "key",
      "create",
      "--tenant",
      "acme",
      "--scopes",
      "verify:write,feedback:write",
      "--json",
    ]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(["apiKey", "keyId", "scopes", "tenantId"]);
    expect(out).toMatchObject({ tenantId: "acme", scopes: ["verify:write", "feedback:write"] });
    expect(out.apiKey).toMatch(/^wdn_[A-Za-z0-9_-]{43}$/);

    const listed = await runWarden(env, ["key", "list", "--tenant", "acme"]);
    expect(listed.stdout).toContain(out.keyId as string);
    expect(listed.stdout).not.toContain(out.apiKey as string);
    expect(listed.stdout).toMatch(/active/);

    expect((await runWarden(env, ["key", "revoke", out.keyId as string])).code).toBe(0);
    expect((await runWarden(env, ["key", "list", "--tenant", "acme"])).stdout).toMatch(/revoked/);
    const twice = await runWarden(env, ["key", "revoke", out.keyId as string]);
    expect(twice.code).toBe(1);
  });

  it("stores only a hash of the key", async () => {
    const { stdout } = await runWarden(env, [
      "key",
      "create",
      "--tenant",
      "acme",
      "--scopes",
      "verify:write",
      "--json",
    ]);
    const { apiKey } = JSON.parse(stdout) as { apiKey: string };
    const disk = ["cli.db", "cli.db-wal"]
      .map((f) => path.join(dir, f))
      .filter((f) => fs.existsSync(f))
      .map((f) => fs.readFileSync(f).toString("latin1"))
      .join("");
    expect(disk).not.toContain(apiKey);
    expect(disk).not.toContain(apiKey.slice(4));
  });

  it("signing-key rotate leaves exactly one signer and keeps the retired key published", async () => {
    expect((await runWarden(env, ["signing-key", "rotate"])).code).toBe(0);
    const second = await runWarden(env, ["signing-key", "rotate"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/new signing key sig_/);
    const store = await openSqliteStore({ file: path.join(dir, "cli.db"), busyTimeoutMs: 5000 });
    const published = await store.signingKeys.listPublished(Date.now());
    await store.close();
    expect(published).toHaveLength(2);
    expect(published.filter((k) => k.retiredAt === null)).toHaveLength(1);
    expect(published[0]?.kid).toBe(/new signing key (sig_[^\s:]+):/.exec(second.stdout)?.[1]);
  });

  it("ledger summary prints the tenant's totals as text or JSON and validates its dates", async () => {
    const store = await openSqliteStore({ file: path.join(dir, "cli.db"), busyTimeoutMs: 5000 });
    await store.events.record(
      testEvent("evt_cli", { tenantId: "acme", createdAt: 1, session: null, signals: {} }),
      undefined,
    );
    const base = {
      tenantId: "acme",
      eventId: "evt_cli",
      source: null,
      observedAt: Date.parse("2026-11-01T00:00:00Z"),
      receivedAt: 2,
    };
    await store.feedback.append(
      { ...base, feedbackId: "fb_a", outcome: "credit_burn", value: 42, unit: "usd", identity: "a" },
      [],
      undefined,
    );
    await store.feedback.append(
      { ...base, feedbackId: "fb_b", outcome: "false_positive", value: null, unit: null, identity: "b" },
      ["credit_burn"],
      undefined,
    );
    await store.close();

    const text = await runWarden(env, ["ledger", "summary", "--tenant", "acme"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/ledger dollar total \(effective credit_burn, usd\): 42/);
    expect(text.stdout).toMatch(/fb_b false_positive on evt_cli, conflicts with credit_burn fb_a/);
    const json = JSON.parse(
      (await runWarden(env, ["ledger", "summary", "--tenant", "acme", "--json"])).stdout,
    );
    expect(json).toMatchObject({
      tenantId: "acme",
      ledgerUsdTotal: 42,
      outcomes: { false_positive: { quarantined: 1 } },
    });
    const later = JSON.parse(
      (await runWarden(env, ["ledger", "summary", "--tenant", "acme", "--since", "2026-11-02", "--json"]))
        .stdout,
    );
    expect(later.ledgerUsdTotal).toBe(0);
    const bad = await runWarden(env, ["ledger", "summary", "--tenant", "acme", "--since", "last week"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since must be an ISO 8601 date/);
  });

  it("tenant update stores a Stripe key without printing it, and removes it", async () => {
    const key = "sk_test_51Abcdefghijklmnopqrstuv";
    const set = await runWarden(env, ["tenant", "update", "acme", "--stripe-secret-key", key]);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/Stripe test key stored/);
    expect(set.stdout + set.stderr).not.toContain(key);
    const store = await openSqliteStore({ file: path.join(dir, "cli.db"), busyTimeoutMs: 5000 });
    expect(await store.tenants.paymentKey("acme")).toBe(key);
    await store.close();
    expect((await runWarden(env, ["tenant", "update", "acme", "--remove-stripe-secret-key"])).code).toBe(0);
    const bad = await runWarden(env, ["tenant", "update", "acme", "--stripe-secret-key", "pk_live_nope"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/must be a Stripe secret key/);
    expect((await runWarden(env, ["tenant", "update", "acme"])).code).toBe(2);
    expect((await runWarden(env, ["tenant", "update", "ghost", "--remove-stripe-secret-key"])).code).toBe(1);
  });

  it("pow solve prints a nonce that solves the seed at the difficulty", async () => {
    const res = await runWarden(env, [
      "pow",
      "solve",
      "--seed",
      "0123456789abcdef0123456789abcdef",
      "--difficulty",
      "4",
    ]);
    expect(res.code).toBe(0);
    const nonce = res.stdout.trim();
    expect(powDigest("0123456789abcdef0123456789abcdef", nonce)).toMatch(/^0000/);
    const bad = await runWarden(env, ["pow", "solve", "--seed", "x", "--difficulty", "12"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--difficulty must be a whole number from 1 to 8/);
  });

  it.each([
    [["key", "create", "--tenant", "acme"], /--scopes is required/],
    [["key", "create", "--tenant", "acme", "--scopes", "verify:write,admin"], /unknown scope "admin"/],
    [["key", "create", "--scopes", "verify:write"], /--tenant <tenantId> is required/],
    [["tenant", "create", "Bad Id!"], /tenant id must be/],
    [["tenant", "create"], /expected 1 argument/],
    [["tenant", "create", "x", "--bogus"], /Unknown option '--bogus'/],
    [["frobnicate"], /unknown command/],
  ])("rejects bad arguments %j with a clear message and exit code 2", async (args, message) => {
    const res = await runWarden(env, args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });

  it("refuses a key for an unknown tenant", async () => {
    const res = await runWarden(env, ["key", "create", "--tenant", "ghost", "--scopes", "verify:write"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/unknown tenant "ghost"/);
  });

  it.each([
    ["serve"],
    ["tenant", "create"],
    ["tenant", "list"],
    ["key", "create"],
    ["key", "list"],
    ["key", "revoke"],
    ["ledger", "summary"],
    ["pow", "solve"],
    ["tenant", "update"],
    ["signing-key", "rotate"],
  ])("%s %s --help prints usage and exits 0", async (...words) => {
    const res = await runWarden(env, [...words.filter(Boolean), "--help"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Usage: warden /);
  });

  it("--help on its own lists every command", async () => {
    const res = await runWarden(env, ["--help"]);
    expect(res.code).toBe(0);
    for (const c of [
      "serve",
      "tenant create",
      "key create",
      "key list",
      "key revoke",
      "signing-key rotate",
    ]) {
      expect(res.stdout).toContain(`warden ${c}`);
    }
  });

  it("the binary runs a command end to end: its output on stdout, exit code 0", async () => {
    expect(await runWardenBinary(env, ["tenant", "create", "binary"])).toMatchObject({
      code: 0,
      stdout: "created tenant binary\n",
    });
    const listed = JSON.parse((await runWardenBinary(env, ["tenant", "list", "--json"])).stdout) as {
      id: string;
    }[];
    expect(listed.map((t) => t.id)).toContain("binary");
  });

  it("the binary names a bad environment variable and exits 2", async () => {
    const res = await runWardenBinary({ ...env, PORT: "http" }, ["tenant", "list"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/PORT: must be a whole number/);
  });
});
