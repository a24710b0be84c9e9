/**
 * The two servers the verify benchmark compares, each run in its own process:
 *   verify   the real Warden app on a fresh SQLite file;
 *   minimal  only the mandatory work of a verify: parse JSON, sign one ES256 token, insert one row,
 *            each done the fastest way for its throughput.
 * Prints one JSON line {url, apiKey} on stdout once listening.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { issueApiKey } from "@warden/server/dist/admin/apiKeys.js";
import { buildApp } from "@warden/server/dist/app.js";
import { loadConfig } from "@warden/server/dist/config.js";
import { buildDeps } from "@warden/server/dist/deps.js";
import { ALL_SCOPES } from "@warden/server/dist/domain.js";
import { timeOrderedId } from "@warden/server/dist/lib/crypto.js";
import { newSigningKey } from "@warden/server/dist/tokens/signingKeys.js";
import SQLite from "better-sqlite3";
import Fastify from "fastify";
import { importJWK, type JWK, SignJWT } from "jose";
import { Kysely, SqliteDialect } from "kysely";
import { profileOnSignal } from "./cpuProfile.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-bench-"));
const mode = process.argv[2];

async function verifyServer(): Promise<{ url: string; apiKey: string }> {
  const config = loadConfig({
    ...process.env,
    WARDEN_DATABASE_URL: `sqlite:${path.join(dir, "warden.db")}`,
    WARDEN_RATE_LIMIT_MAX: "100000000",
    WARDEN_LOG_LEVEL: "warn",
  });
  const deps = await buildDeps(config);
  await deps.store.tenants.create({ id: "bench", rawPii: false, logOnly: false, createdAt: Date.now() });
  const { apiKey } = await issueApiKey(deps.store, {
    tenantId: "bench",
    scopes: [...ALL_SCOPES],
    logOnly: false,
    now: Date.now(),
  });
  const app = await buildApp(deps);
  return { url: await app.listen({ host: "127.0.0.1", port: 0 }), apiKey };
}

async function minimalServer(): Promise<{ url: string; apiKey: string }> {
  const raw = new SQLite(path.join(dir, "minimal.db"));
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = NORMAL");
  raw.exec("create table rows (id text primary key, created_at integer not null, body text not null)");
  const db = new Kysely<{ rows: { id: string; created_at: number; body: string } }>({
    dialect: new SqliteDialect({ database: raw }),
  });
  const record = await newSigningKey(Date.now());
  const key = await importJWK(JSON.parse(record.privateJwk) as JWK, "ES256");
  const app = Fastify({ logger: false });
  app.post("/v1/verify", async (request) => {
    const body = request.body as { action?: string; session?: string };
    const now = Date.now();
    const id = timeOrderedId("evt", now);
    const iat = Math.floor(now / 1000);
    // The same claims as a verdict token. Signed with jose's WebCrypto, not with verify's synchronous
    // signer: on this 2-core machine the thread pool signing on the second core gives this handler
    // its highest peak (measured side by side: 3,782-3,809 req/s against 2,936 with the synchronous
    // signer), and the baseline must be the fastest way to do the mandatory work.
    const token = await new SignJWT({
      tid: "bench",
      decision: "allow",
      actorType: "unknown",
      degraded: false,
      action: body.action ?? "x",
    })
      .setProtectedHeader({ alg: "ES256", kid: record.kid, typ: "JWT" })
      .setIssuer("bench")
      .setAudience("bench")
      .setSubject(body.session ?? id)
      .setJti(id)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 300)
      .sign(key);
    await db
      .insertInto("rows")
      .values({ id, created_at: now, body: body.action ?? "" })
      .execute();
    return { eventId: id, verdictToken: token };
  });
  return { url: await app.listen({ host: "127.0.0.1", port: 0 }), apiKey: "unused" };
}

const started =
  mode === "verify" ? await verifyServer() : mode === "minimal" ? await minimalServer() : undefined;
if (!started) {
  process.stderr.write("usage: benchServers.js verify|minimal\n");
  process.exit(2);
}
// BENCH_CPU_PROFILE=<file>: SIGUSR2 starts profiling the main thread; SIGTERM writes the profile.
const profile = process.env.BENCH_CPU_PROFILE ? profileOnSignal(process.env.BENCH_CPU_PROFILE) : undefined;
process.stdout.write(`${JSON.stringify(started)}\n`);
process.on("SIGTERM", async () => {
  await profile?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
