import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { FastifyInstance } from "fastify";
import { expect } from "vitest";
import { issueApiKey } from "../admin/apiKeys.js";
import { buildApp } from "../app.js";
import { loadConfig } from "../config.js";
import { buildDeps, closeDeps, type Deps, withConfiguredCounters } from "../deps.js";
import type { EventRecord, Scope } from "../domain.js";
import { ALL_SCOPES } from "../domain.js";
import { ERROR_LABELS } from "../errors.js";
import { HostingNetworks } from "../operations/verify/signals/hostingNetworks.js";
import type { Store } from "../store/interfaces.js";
import { openSqliteStore } from "../store/sqlite/sqliteStore.js";

export function tempDir(prefix = "warden-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  store: Store;
  dbFile: string;
  tenant(id: string, opts?: { rawPii?: boolean; logOnly?: boolean }): Promise<string>;
  key(
    tenantId: string,
    opts?: { scopes?: Scope[]; logOnly?: boolean },
  ): Promise<{ keyId: string; apiKey: string }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Wraps the real store, e.g. to inject faults. */
  wrapStore?: (store: Store) => Store;
  /** Another store than a fresh SQLite file (PostgreSQL tests); closed with the app. */
  store?: Store;
  clock?: () => number;
  /** Where spans go when the env turns traces on (OTEL_TRACES_EXPORTER=otlp), instead of OTLP/HTTP. */
  traceExporter?: SpanExporter;
  /**
   * The hosting-network data set (`hostingNetworks()` from deps.ts) for a test that scores hosting
   * networks. Without it no network is a hosting one: the data set takes about half a second to read
   * in each test process that loads it, and most tests are about something else.
   */
  hosting?: HostingNetworks;
}

/**
 * A clock at real speed, moved forward to just after the start of a fixed rate-limit window of
 * `windowSeconds` (windows are aligned to the epoch): a test that counts up to a limit and expects
 * the next call to be refused has the whole window for its calls, instead of failing when a loaded
 * machine carries them across a boundary. Give one clock to every app that must share a window.
 */
export function windowStartClock(windowSeconds: number): () => number {
  const windowMs = windowSeconds * 1000;
  const shift = Math.ceil(Date.now() / windowMs) * windowMs + 1 - Date.now();
  return () => Date.now() + shift;
}

/** Verify's deadline in a test app whose test sets none: far beyond any scheduling delay. */
export const LOGIC_TEST_DEADLINE_MS = 5_000;

/** A real app on a fresh SQLite file, silent logs, driven with inject() or listen(). */
export async function makeTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = tempDir();
  const dbFile = path.join(dir, "warden.db");
  const config = loadConfig({
    WARDEN_DATABASE_URL: `sqlite:${dbFile}`,
    WARDEN_LOG_LEVEL: "silent",
    WARDEN_VERIFY_DEADLINE_MS: "45",
    WARDEN_STORE_TIMEOUT_MS: "40",
    ...options.env,
  });
  const real =
    options.store ?? (await openSqliteStore({ file: dbFile, busyTimeoutMs: config.storeTimeoutMs }));
  const configured = await withConfiguredCounters(config, real);
  const store = options.wrapStore ? options.wrapStore(configured) : configured;
  // A test of logic (idempotency, once-only clears, log-only) must not turn into a test of the
  // machine's load: past verify's production deadline the answer is, rightly, the degraded challenge,
  // and on a busy shared machine 45 ms is overrun. Tests of the deadline set their own.
  const timed =
    options.env?.WARDEN_VERIFY_DEADLINE_MS === undefined
      ? { ...config, verifyDeadlineMs: LOGIC_TEST_DEADLINE_MS }
      : config;
  const deps = await buildDeps(timed, store, options.clock, {
    hosting: options.hosting ?? HostingNetworks.empty(),
    ...(options.traceExporter === undefined ? {} : { traceExporter: options.traceExporter }),
  });
  const app = await buildApp(deps, { logger: false });
  await app.ready();
  // As `warden serve` does before it listens: a test's first verify then runs compiled code, not a
  // cold path that can overrun the deadline and answer the degraded challenge.
  await app.warmUp();
  return {
    app,
    deps,
    store: real,
    dbFile,
    async tenant(id, opts = {}) {
      await real.tenants.create({
        id,
        rawPii: opts.rawPii ?? false,
        logOnly: opts.logOnly ?? false,
        createdAt: Date.now(),
      });
      return id;
    },
    async key(tenantId, opts = {}) {
      const issued = await issueApiKey(real, {
        tenantId,
        scopes: opts.scopes ?? [...ALL_SCOPES],
        logOnly: opts.logOnly ?? false,
        now: Date.now(),
      });
      return { keyId: issued.keyId, apiKey: issued.apiKey };
    },
    async close() {
      await app.close();
      await closeDeps(deps);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A store whose chosen methods fail on demand, after `hangUntil` settles when it is given (a call
 * that hangs until the test lets it go); everything else passes through.
 */
export function faultyStore(
  inner: Store,
  faults: { failing?: Set<string>; hangUntil?: Promise<unknown>; error?: () => Error },
): Store {
  const wrap = <T extends object>(area: string, target: T): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver);
        if (typeof value !== "function") return value;
        const name = `${area}.${String(prop)}`;
        return async (...args: unknown[]) => {
          if (faults.failing?.has(name) || faults.failing?.has(area)) {
            if (faults.hangUntil) await faults.hangUntil;
            throw faults.error ? faults.error() : new Error(`injected fault in ${name}`);
          }
          return (value as (...a: unknown[]) => unknown).apply(obj, args);
        };
      },
    });
  return {
    tenants: wrap("tenants", inner.tenants),
    apiKeys: wrap("apiKeys", inner.apiKeys),
    signingKeys: wrap("signingKeys", inner.signingKeys),
    counters: wrap("counters", inner.counters),
    events: wrap("events", inner.events),
    idempotency: wrap("idempotency", inner.idempotency),
    feedback: wrap("feedback", inner.feedback),
    challenges: wrap("challenges", inner.challenges),
    agents: wrap("agents", inner.agents),
    policies: wrap("policies", inner.policies),
    insights: wrap("insights", inner.insights),
    consoleSessions: wrap("consoleSessions", inner.consoleSessions),
    removal: wrap("removal", inner.removal),
    // Faulted with verify's own: a test that fails `apiKeys` fails every key lookup.
    patient: {
      apiKeys: wrap("apiKeys", inner.patient.apiKeys),
      counters: wrap("counters", inner.patient.counters),
      idempotency: wrap("idempotency", inner.patient.idempotency),
    },
    ping: () => inner.ping(),
    warmUp: () => inner.warmUp(),
    close: () => inner.close(),
  };
}

export { CHROME_HEADERS, CHROME_UA } from "../lib/chromeNavigation.js";

export function bearer(apiKey: string): Record<string, string> {
  return { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
}

/** A minimal event record for store-level tests. */
export function testEvent(id: string, overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    id,
    tenantId: "t1",
    keyId: "key_x",
    createdAt: 1000,
    action: "signup",
    surface: null,
    session: "s1",
    decision: "allow",
    wouldBeDecision: "allow",
    actorType: "unknown",
    confidence: 0.5,
    reasons: ["r"],
    degraded: false,
    enforcementMode: "enforce",
    costs: { falseAllow: 1, falseChallenge: 1, falseDeny: 3 },
    signals: { ipNetwork: "203.0.113.0/24" },
    engineVersion: "e",
    policyVersion: "p",
    attempt: null,
    decidedBy: "model",
    risk: { estimate: 0.2, low: 0.1, high: 0.3, raised: false },
    emailHash: null,
    network: "203.0.113.0/24",
    reasonCodes: [],
    ...overrides,
  };
}

/** Every error answer is the Error schema (docs/api.md#errors): exactly error, message and code, with the label of its status. */
export function expectError(
  res: { statusCode: number; json(): unknown },
  status: number,
  code: string,
): void {
  expect(res.statusCode).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["code", "error", "message"]);
  expect(body.code).toBe(code);
  expect(body.error).toBe(ERROR_LABELS[status]);
  expect(typeof body.message).toBe("string");
}
