import os from "node:os";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  defaultDatabaseUrl,
  inRetentionHours,
  loadConfig,
  unknownText,
  unknownVariables,
} from "./config.js";
import { runWarden } from "./testing/cliSandbox.js";

describe("configuration", () => {
  it("has documented defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      databaseUrl: defaultDatabaseUrl(),
      host: "127.0.0.1",
      port: 8080,
      bodyLimitBytes: 65536,
      rateLimitMax: 6000,
      rateLimitWindowSeconds: 60,
      tokenTtlSeconds: 300,
      verifyDeadlineMs: 30,
      idempotencyTtlHours: 24,
    });
    expect(c.databaseUrl).toMatch(/data[/\\]warden\.db$/);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    ["PORT", "eighty", /PORT: must be a whole number/],
    ["PORT", "70000", /PORT: must be between 0 and 65535/],
    ["WARDEN_BODY_LIMIT_BYTES", "10", /WARDEN_BODY_LIMIT_BYTES: must be between/],
    ["WARDEN_VERIFY_DEADLINE_MS", "100", /WARDEN_VERIFY_DEADLINE_MS: must be between 5 and 45/],
    ["WARDEN_IDEMPOTENCY_TTL_HOURS", "1", /at least|between 24/],
    ["WARDEN_LOG_LEVEL", "loud", /WARDEN_LOG_LEVEL: must be one of/],
    ["WARDEN_DATABASE_URL", "mysql://x", /WARDEN_DATABASE_URL: must start with sqlite: or postgres:\/\//],
    ["WARDEN_PG_POOL_SIZE", "0", /WARDEN_PG_POOL_SIZE: must be between 1 and 200/],
    ["WARDEN_PG_POOL_MIN", "11", /WARDEN_PG_POOL_MIN: must not exceed WARDEN_PG_POOL_SIZE \(10\), got 11/],
    ["WARDEN_PG_POOL_MIN", "-1", /WARDEN_PG_POOL_MIN: must be/],
    ["WARDEN_PG_POOLER", "pgbouncer", /WARDEN_PG_POOLER: must be one of none, transaction, got "pgbouncer"/],
    ["WARDEN_TOKEN_ISSUER", "  ", /WARDEN_TOKEN_ISSUER: must not be empty/],
    ["WARDEN_PG_READ_URL", "mysql://replica", /WARDEN_PG_READ_URL: must start with postgres:\/\//],
    [
      "WARDEN_PG_READ_URL",
      "postgres://replica/db",
      /WARDEN_PG_READ_URL: needs a PostgreSQL WARDEN_DATABASE_URL/,
    ],
    ["WARDEN_REDIS_URL", "localhost:6379", /WARDEN_REDIS_URL: must start with redis:\/\/, rediss:\/\//],
    [
      "WARDEN_REDIS_URL",
      "redis://a:7000,b:7001",
      /WARDEN_REDIS_URL: names several hosts: use redis\+cluster:\/\//,
    ],
    ["WARDEN_REDIS_URL", "redis+sentinel://s:26379", /WARDEN_REDIS_URL: names no master/],
    ["WARDEN_AGENT_DIRECTORY_FETCH", "maybe", /WARDEN_AGENT_DIRECTORY_FETCH: must be true or false/],
    ["WARDEN_POLICY_REFRESH_SECONDS", "0", /WARDEN_POLICY_REFRESH_SECONDS: must be between 1 and 3600/],
    [
      "WARDEN_AGENT_SIGNATURE_MAX_VALIDITY_SECONDS",
      "3153600000",
      /WARDEN_AGENT_SIGNATURE_MAX_VALIDITY_SECONDS: must be between 60 and 2592000/,
    ],
    [
      "WARDEN_RETENTION_DAYS",
      "6",
      /WARDEN_RETENTION_DAYS: must be a whole number of days from 7 .* or "forever"/,
    ],
    ["WARDEN_RETENTION_DAYS", "half a year", /WARDEN_RETENTION_DAYS: must be a whole number of days/],
    ["WARDEN_RETENTION_DAYS", "36501", /WARDEN_RETENTION_DAYS: must be/],
    ["WARDEN_RETENTION_HOURS", "2", /WARDEN_RETENTION_HOURS: must be a window of UTC hours "from-to"/],
    ["WARDEN_RETENTION_HOURS", "3-3", /WARDEN_RETENTION_HOURS: must be a window/],
    ["WARDEN_RETENTION_HOURS", "0-24x", /WARDEN_RETENTION_HOURS: must be a window/],
    ["WARDEN_RETENTION_HOURS", "24-2", /WARDEN_RETENTION_HOURS: must be a window/],
  ])("rejects %s=%j naming the variable", (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it("sends the console's long reads to WARDEN_PG_READ_URL when set, beside a PostgreSQL database", () => {
    expect(loadConfig({}).pgReadUrl).toBeUndefined();
    const env = {
      WARDEN_DATABASE_URL: "postgres://primary/warden",
      WARDEN_PG_READ_URL: "postgres://replica/warden",
    };
    expect(loadConfig(env).pgReadUrl).toBe("postgres://replica/warden");
  });

  it("keeps events 180 days by default, or as many days as set, or forever; never shorter than idempotency keys live", () => {
    expect(loadConfig({}).retentionDays).toBe(180);
    expect(loadConfig({ WARDEN_RETENTION_DAYS: "7" }).retentionDays).toBe(7);
    expect(loadConfig({ WARDEN_RETENTION_DAYS: " Forever " }).retentionDays).toBeUndefined();
    // A retry under a key whose event was removed would be decided and recorded afresh.
    expect(() => loadConfig({ WARDEN_RETENTION_DAYS: "29", WARDEN_IDEMPOTENCY_TTL_HOURS: "700" })).toThrow(
      /WARDEN_RETENTION_DAYS: must be a whole number of days from 30 /,
    );
    expect(
      loadConfig({ WARDEN_RETENTION_DAYS: "30", WARDEN_IDEMPOTENCY_TTL_HOURS: "700" }).retentionDays,
    ).toBe(30);
  });

  it("removes events at every hour by default, or within WARDEN_RETENTION_HOURS (UTC, across midnight too), until the window's end", () => {
    expect(loadConfig({}).retentionHours).toBeUndefined();
    expect(loadConfig({ WARDEN_RETENTION_HOURS: "0-24" }).retentionHours).toBeUndefined();
    expect(inRetentionHours(undefined, Date.parse("2027-01-01T13:00:00Z"))).toEqual({
      until: Number.POSITIVE_INFINITY,
    });
    const night = loadConfig({ WARDEN_RETENTION_HOURS: "22-4" }).retentionHours;
    expect(night).toEqual({ from: 22, to: 4 });
    const at = (iso: string) => inRetentionHours(night, Date.parse(iso));
    expect(at("2027-01-01T21:59:59Z")).toBeUndefined();
    expect(at("2027-01-01T22:00:00Z")).toEqual({ until: Date.parse("2027-01-02T04:00:00Z") });
    expect(at("2027-01-02T03:30:00Z")).toEqual({ until: Date.parse("2027-01-02T04:00:00Z") });
    expect(at("2027-01-02T04:00:00Z")).toBeUndefined();
    const early = loadConfig({ WARDEN_RETENTION_HOURS: " 2 - 24 " }).retentionHours;
    expect(early).toEqual({ from: 2, to: 0 });
    expect(inRetentionHours(early, Date.parse("2027-01-01T23:10:00Z"))).toEqual({
      until: Date.parse("2027-01-02T00:00:00Z"),
    });
    expect(inRetentionHours(early, Date.parse("2027-01-01T01:10:00Z"))).toBeUndefined();
  });

  it("keeps two PostgreSQL connections open by default, never more than the pool", () => {
    expect(loadConfig({}).pgPoolMin).toBe(2);
    expect(loadConfig({}).pgPreparedStatements).toBe(true);
    expect(loadConfig({ WARDEN_PG_PREPARED_STATEMENTS: "false" }).pgPreparedStatements).toBe(false);
    // Behind a transaction pooler, no named statements unless asked for (PgBouncer 1.21+ keeps them).
    expect(loadConfig({}).pgPooler).toBe("none");
    expect(loadConfig({ WARDEN_PG_POOLER: "transaction" })).toMatchObject({
      pgPooler: "transaction",
      pgPreparedStatements: false,
    });
    expect(
      loadConfig({ WARDEN_PG_POOLER: "transaction", WARDEN_PG_PREPARED_STATEMENTS: "true" })
        .pgPreparedStatements,
    ).toBe(true);
    expect(loadConfig({ WARDEN_PG_POOL_SIZE: "1" }).pgPoolMin).toBe(1);
    expect(loadConfig({ WARDEN_PG_POOL_SIZE: "20", WARDEN_PG_POOL_MIN: "20" }).pgPoolMin).toBe(20);
  });

  it("WARDEN_WORKERS: 1 by default, auto one per core on PostgreSQL and 1 on SQLite, several refused on SQLite", () => {
    const pg = "postgres://warden@db:5432/warden";
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WARDEN_DATABASE_URL: pg, WARDEN_WORKERS: "4" }).workers).toBe(4);
    expect(loadConfig({ WARDEN_DATABASE_URL: pg, WARDEN_WORKERS: "auto" }).workers).toBe(
      os.availableParallelism(),
    );
    expect(loadConfig({ WARDEN_WORKERS: "AUTO" }).workers).toBe(1);
    expect(loadConfig({ WARDEN_WORKERS: "1" }).workers).toBe(1);
    expect(() => loadConfig({ WARDEN_WORKERS: "2" })).toThrow(
      /WARDEN_WORKERS: more than one worker needs PostgreSQL .*got 2 on SQLite/,
    );
    expect(() => loadConfig({ WARDEN_DATABASE_URL: pg, WARDEN_WORKERS: "0" })).toThrow(
      /WARDEN_WORKERS: must be between 1 and 256, got 0/,
    );
    expect(() => loadConfig({ WARDEN_DATABASE_URL: pg, WARDEN_WORKERS: "all" })).toThrow(
      /WARDEN_WORKERS: must be a whole number or auto, got "all"/,
    );
  });

  describe("OpenTelemetry traces", () => {
    const on = { OTEL_TRACES_EXPORTER: "otlp" };

    it("are off by default, and off with the standard variables of a collector set but no OTEL_TRACES_EXPORTER", () => {
      expect(loadConfig({}).tracing).toBeUndefined();
      expect(
        loadConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
          OTEL_SERVICE_NAME: "warden",
          // A value for another SDK does not stop a Warden that sends no traces.
          OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        }).tracing,
      ).toBeUndefined();
      expect(loadConfig({ OTEL_TRACES_EXPORTER: "none" }).tracing).toBeUndefined();
      expect(loadConfig({ ...on, OTEL_SDK_DISABLED: "true" }).tracing).toBeUndefined();
    });

    it("OTEL_TRACES_EXPORTER=otlp sends them to the local collector by default, as http/protobuf", () => {
      const tracing = loadConfig(on).tracing;
      expect(tracing).toEqual({
        endpoint: new URL("http://localhost:4318/v1/traces"),
        protocol: "http/protobuf",
        headers: {},
        timeoutMs: 10_000,
        serviceName: "warden",
        sampler: "parentbased_always_on",
        samplerRatio: 1,
      });
      expect(Object.isFrozen(tracing)).toBe(true);
    });

    it("OTEL_EXPORTER_OTLP_ENDPOINT is a base URL the traces path is appended to; the traces endpoint is used as is and wins", () => {
      const base = { ...on, OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example:4318/base/" };
      expect(loadConfig(base).tracing?.endpoint.href).toBe("https://otel.example:4318/base/v1/traces");
      expect(
        loadConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:9999/spans" }).tracing
          ?.endpoint.href,
      ).toBe("http://other:9999/spans");
    });

    it("reads the protocol, headers, timeout, service name and sampler, the traces-specific variable first", () => {
      const tracing = loadConfig({
        ...on,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc, x-tenant=ops",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-tenant=traces",
        OTEL_EXPORTER_OTLP_TIMEOUT: "3000",
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "2500",
        OTEL_SERVICE_NAME: "warden-eu",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }).tracing;
      expect(tracing).toMatchObject({
        protocol: "http/json",
        headers: { authorization: "Bearer abc", "x-tenant": "traces" },
        timeoutMs: 2500,
        serviceName: "warden-eu",
        sampler: "parentbased_traceidratio",
        samplerRatio: 0.25,
      });
    });

    it.each([
      [{ OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER: must be otlp or none, got "zipkin"/],
      [
        { ...on, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json, got "grpc" .*4318/,
      ],
      [{ ...on, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "json" }, /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be/],
      [
        { ...on, OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
        /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/,
      ],
      [
        { ...on, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" },
        /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an absolute URL/,
      ],
      [{ ...on, OTEL_EXPORTER_OTLP_TIMEOUT: "soon" }, /OTEL_EXPORTER_OTLP_TIMEOUT: must be a whole number/],
      [{ ...on, OTEL_TRACES_SAMPLER: "sometimes" }, /OTEL_TRACES_SAMPLER: must be one of always_on, /],
      [
        { ...on, OTEL_TRACES_SAMPLER_ARG: "1.5" },
        /OTEL_TRACES_SAMPLER_ARG: must be a ratio from 0 to 1, got "1.5"/,
      ],
      [{ ...on, OTEL_SDK_DISABLED: "maybe" }, /OTEL_SDK_DISABLED: must be true or false/],
      [{ ...on, OTEL_SERVICE_NAME: " " }, /OTEL_SERVICE_NAME: must not be empty/],
    ])("with traces on, refuses %j naming the variable", (env, message) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    });

    it("a malformed header is refused by its position, never echoing its value (a credential)", () => {
      for (const headers of [
        "Authorization: Bearer s3cret-token",
        "a=1,Bad Name=s3cret-token",
        "k=%E0%A4%As3cret-token",
      ]) {
        const load = () => loadConfig({ ...on, OTEL_EXPORTER_OTLP_HEADERS: headers });
        expect(load).toThrow(/OTEL_EXPORTER_OTLP_HEADERS: entry \d/);
        try {
          load();
        } catch (err) {
          expect(String(err)).not.toContain("s3cret");
        }
      }
    });
  });
});

describe("an unknown WARDEN_* variable", () => {
  it("is named with the settings it most likely meant", () => {
    expect(unknownVariables({ WARDEN_DATABASE_READ_URL: "postgres://r", WARDEN_PG_POOL_SZE: "4" })).toEqual([
      { name: "WARDEN_DATABASE_READ_URL", nearest: ["WARDEN_DATABASE_URL", "WARDEN_PG_READ_URL"] },
      { name: "WARDEN_PG_POOL_SZE", nearest: ["WARDEN_PG_POOL_SIZE", "WARDEN_PG_POOL_MIN"] },
    ]);
    expect(unknownText(unknownVariables({ WARDEN_VERIFY_DEADLINE: "30" }))).toBe(
      "WARDEN_VERIFY_DEADLINE is not a Warden setting (did you mean WARDEN_VERIFY_DEADLINE_MS?)",
    );
  });

  it("leaves known settings, other programs' variables and this repository's test tools alone", () => {
    expect(
      unknownVariables({
        WARDEN_PG_READ_URL: "postgres://r",
        PORT: "1",
        PGHOST: "x",
        WARDEN_TEST_POSTGRES_URL: "postgres://t",
        WARDEN_FUZZ_SEED: "1",
      }),
    ).toEqual([]);
  });

  it("is a warning, or refuses the start under WARDEN_STRICT_CONFIG", () => {
    expect(() => loadConfig({ WARDEN_PG_POOL_SZE: "4" })).not.toThrow();
    expect(() => loadConfig({ WARDEN_PG_POOL_SZE: "4", WARDEN_STRICT_CONFIG: "true" })).toThrow(
      /WARDEN_PG_POOL_SZE is not a Warden setting \(did you mean WARDEN_PG_POOL_SIZE/,
    );
    expect(() => loadConfig({ WARDEN_PG_POOL_SIZE: "4", WARDEN_STRICT_CONFIG: "true" })).not.toThrow();
  });

  it("is printed by every command at start", async () => {
    const run = await runWarden(
      { WARDEN_DATABASE_URL: "sqlite::memory:", WARDEN_LOG_LEVEL: "silent", WARDEN_DATABASE_READ_URL: "x" },
      ["tenant", "list"],
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      "warning: WARDEN_DATABASE_READ_URL is not a Warden setting (did you mean WARDEN_DATABASE_URL or WARDEN_PG_READ_URL?); ignored",
    );
  });
});
