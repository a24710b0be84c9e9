import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";
import { tempDir } from "../testing/harness.js";
import { AgentRegistry } from "./agentRegistry.js";
import { DIRECTORY_PATH, fetchKeyDirectory, isPublicAddress } from "./keyDirectory.js";

/** The key directory of the public vectors (one Ed25519 key) and its keyid. */
const DIRECTORY = JSON.stringify({
  keys: [
    {
      kty: "OKP",
      crv: "Ed25519",
      kid: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
      x: "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs",
      use: "sig",
    },
  ],
});
const KEYID = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";

const dir = tempDir();
let cert: string;
let server: Server;
let origin: string;
/** What the test server answers; tests change it. */
let respond: (res: import("node:http").ServerResponse) => void;

beforeAll(async () => {
  // A throwaway self-signed certificate for 127.0.0.1 and localhost (openssl is on every machine here).
  const key = path.join(dir, "key.pem");
  const crt = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      crt,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stdio: "ignore" },
  );
  cert = fs.readFileSync(crt, "utf8");
  server = createServer({ key: fs.readFileSync(key), cert }, (req, res) => {
    if (req.url !== DIRECTORY_PATH) {
      res.writeHead(404).end();
      return;
    }
    respond(res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const serveDirectory = (res: import("node:http").ServerResponse) =>
  res
    .writeHead(200, {
      "content-type": "application/http-message-signatures-directory+json",
      "cache-control": "max-age=600",
    })
    .end(DIRECTORY);
const limits = () => ({ timeoutMs: 1000, maxBytes: 4096, allowPrivate: true, ca: cert });

describe("key directory fetching", () => {
  it("reads the directory's keys with their thumbprints and its max-age", async () => {
    respond = serveDirectory;
    const result = await fetchKeyDirectory(origin, limits());
    expect(result).toMatchObject({ ok: true, maxAgeSeconds: 600 });
    expect(result.ok && result.keys.map((k) => k.thumbprint)).toEqual([KEYID]);
  });

  it("refuses private and loopback addresses unless the setting allows them (also through DNS)", async () => {
    respond = serveDirectory;
    const closed = { ...limits(), allowPrivate: false };
    expect(await fetchKeyDirectory(origin, closed)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not a public address/),
    });
    const viaDns = origin.replace("127.0.0.1", "localhost");
    expect(await fetchKeyDirectory(viaDns, closed)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/no public address/),
    });
    expect(isPublicAddress("10.1.2.3")).toBe(false);
    expect(isPublicAddress("::ffff:192.168.1.1")).toBe(false);
    expect(isPublicAddress("93.184.215.14")).toBe(true);
  });

  it("https only", async () => {
    expect(await fetchKeyDirectory(origin.replace("https:", "http:"), limits())).toMatchObject({
      ok: false,
      message: "key directories are fetched over https only",
    });
  });

  it("a directory over the size cap is refused", async () => {
    respond = (res) => res.writeHead(200).end(JSON.stringify({ keys: [], pad: "x".repeat(10_000) }));
    expect(await fetchKeyDirectory(origin, limits())).toMatchObject({
      ok: false,
      message: expect.stringMatching(/larger than 4096/),
    });
  });

  it("a directory slower than the time cap is refused", async () => {
    // Served whole after 1.5 s: refused, the fetch gave up at its cap instead of waiting for it.
    respond = (res) => setTimeout(() => serveDirectory(res), 1500);
    expect(await fetchKeyDirectory(origin, { ...limits(), timeoutMs: 300 })).toMatchObject({ ok: false });
  });

  it("errors, non-JSON and unusable keys are refused", async () => {
    respond = (res) => res.writeHead(500).end();
    expect(await fetchKeyDirectory(origin, limits())).toMatchObject({
      ok: false,
      message: "the directory answered HTTP 500",
    });
    respond = (res) => res.writeHead(200).end("<html>");
    expect(await fetchKeyDirectory(origin, limits())).toMatchObject({
      ok: false,
      message: "the directory is not JSON",
    });
    respond = (res) => res.writeHead(200).end(JSON.stringify({ keys: [{ kty: "EC", crv: "P-256" }] }));
    expect(await fetchKeyDirectory(origin, limits())).toMatchObject({ ok: false });
  });

  it("the registry uses fetched keys for operators registered with --fetch-directory, and keeps them when a refresh fails", async () => {
    const store = await openSqliteStore({ file: path.join(dir, "r.db"), busyTimeoutMs: 1000 });
    await store.agents.put({
      operator: "Directory Bot",
      signatureAgent: origin,
      keys: [],
      fetchDirectory: true,
      createdAt: 1,
      updatedAt: 1,
    });
    const registry = new AgentRegistry(store, 3600, {
      enabled: true,
      limits: limits(),
      minTtlSeconds: 60,
      maxTtlSeconds: 3600,
    });
    respond = serveDirectory;
    await registry.reload();
    const [op] = await store.agents.list();
    if (!op) throw new Error("no operator");
    await registry.refreshDirectory(op);
    expect(registry.lookup(KEYID)).toMatchObject({ operator: "Directory Bot", alg: "ed25519" });
    respond = (res) => res.writeHead(503).end();
    expect((await registry.refreshDirectory(op)).ok).toBe(false);
    expect(registry.lookup(KEYID)).toMatchObject({ operator: "Directory Bot" });
    registry.stop();
    await store.close();
  });
});
