import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseCommandLine, runCli } from "../cli/main.js";
import { loadConfig } from "../config.js";
import { makeTestApp } from "../testing/harness.js";
import { skipLoudly } from "../testing/skip.js";

/**
 * The files that run Warden elsewhere (Dockerfile, deploy/compose.yaml, deploy/warden.service and its
 * deploy/warden.env) name only commands, settings, routes and files that exist, with values the
 * configuration accepts. Docker cannot run here, so the image itself is not built by the tests:
 * this is what can be checked without it.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const read = (file: string) => fs.readFileSync(path.join(REPO, file), "utf8");
const serverManifest = JSON.parse(read("packages/server/package.json")) as {
  bin: Record<string, string>;
  files: string[];
};
const rootManifest = JSON.parse(read("package.json")) as { workspaces: string[]; engines: { node: string } };

/** The variables loadConfig reads (recorded through a proxy, as configDocs.test does). */
function settingsRead(): Set<string> {
  const seen = new Set<string>();
  loadConfig(
    new Proxy(
      {},
      {
        get: (_, name) => {
          if (typeof name === "string") seen.add(name);
          return undefined;
        },
      },
    ),
  );
  return seen;
}
const SETTINGS = settingsRead();

/** A Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const [op = "", ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

/** Every workspace's package.json, as the root's `workspaces` (folders, or globs `dir/*`) find them. */
function workspaceManifests(): string[] {
  return rootManifest.workspaces
    .flatMap((entry) => {
      if (!entry.endsWith("/*")) return [`${entry}/package.json`];
      const dir = entry.slice(0, -2);
      return fs.readdirSync(path.join(REPO, dir)).map((name) => `${dir}/${name}/package.json`);
    })
    .filter((file) => fs.existsSync(path.join(REPO, file)))
    .sort();
}

describe("Dockerfile", () => {
  const steps = instructions(read("Dockerfile"));
  const stages = steps.filter((s) => s.op === "FROM");
  const lastStage = steps.slice(steps.lastIndexOf(stages.at(-1) as (typeof steps)[number]));

  it("every stage is a node:20 image (the Node the engines field and CI run)", () => {
    const version = /^NODE_VERSION=(\d+)$/.exec(steps.find((s) => s.op === "ARG")?.args ?? "")?.[1];
    expect(version).toBe(/^>=(\d+)\./.exec(rootManifest.engines.node)?.[1]);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.args).toMatch(/^node:\$\{NODE_VERSION\}-bookworm(-slim)?\b/);
  });

  it("the image runs as a user other than root", () => {
    const user = lastStage.filter((s) => s.op === "USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(["root", "0", "0:0"]).not.toContain(user);
  });

  it("copies files that exist, every workspace manifest (the lockfile's tree) and every file the server package ships", () => {
    const copies = steps.filter((s) => s.op === "COPY");
    const fromContext = copies.filter((c) => !c.args.startsWith("--from="));
    for (const copy of fromContext) {
      const sources = copy.args.split(/\s+/).slice(0, -1);
      for (const source of sources) expect(fs.existsSync(path.join(REPO, source)), source).toBe(true);
    }
    const manifests = fromContext
      .flatMap((c) => c.args.split(/\s+/).slice(0, -1))
      .filter((s) => s.endsWith("/package.json"))
      .sort();
    expect(manifests).toEqual(workspaceManifests());
    const shipped = serverManifest.files.filter((f) => !f.startsWith("!") && f !== "README.md");
    const fromBuild = copies.filter((c) => c.args.startsWith("--from=build")).map((c) => c.args);
    for (const file of [...shipped, "package.json"]) {
      expect(fromBuild.some((args) => args.includes(`/src/packages/server/${file} `))).toBe(true);
    }
  });

  it("its settings are ones the configuration reads and accepts; it runs `warden serve`", () => {
    const env = Object.fromEntries(
      lastStage
        .filter((s) => s.op === "ENV")
        .flatMap((s) =>
          [...s.args.matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]),
        ),
    );
    const { NODE_ENV, ...settings } = env;
    expect(NODE_ENV).toBe("production");
    for (const name of Object.keys(settings)) expect(SETTINGS.has(name), name).toBe(true);
    expect(() => loadConfig(settings)).not.toThrow();
    const entrypoint = JSON.parse(lastStage.find((s) => s.op === "ENTRYPOINT")?.args ?? "[]") as string[];
    const cmd = JSON.parse(lastStage.find((s) => s.op === "CMD")?.args ?? "[]") as string[];
    expect(entrypoint).toEqual(Object.keys(serverManifest.bin));
    expect(parseCommandLine(cmd)?.name).toBe("serve");
    expect(lastStage.find((s) => s.op === "RUN")?.args).toContain(
      `ln -s /opt/warden/packages/server/${serverManifest.bin.warden} /usr/local/bin/warden`,
    );
  });

  it("the health check asks /healthz, which answers 200 while the process is up", async () => {
    const check = lastStage.find((s) => s.op === "HEALTHCHECK")?.args ?? "";
    expect(check).toContain("/healthz");
    expect(check).not.toContain("/readyz");
    const t = await makeTestApp();
    try {
      expect((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("deploy/build-image-offline.sh makes every base image the stages name", () => {
    const version = /^NODE_VERSION=(\d+)$/.exec(steps.find((s) => s.op === "ARG")?.args ?? "")?.[1];
    const made = [
      ...read("deploy/build-image-offline.sh").matchAll(/^base docker\.io\/library\/(\S+)/gm),
    ].map((m) => m[1]);
    const named = stages.map((s) =>
      (s.args.split(/\s+/)[0] as string).replace(/\$\{NODE_VERSION\}/, version ?? ""),
    );
    expect(new Set(made)).toEqual(new Set(named));
  });

  it(".dockerignore keeps local builds and dependencies out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["**/node_modules", "**/dist", "packages/server/assets", ".git"]) {
      expect(ignored).toContain(entry);
    }
  });
});

describe("deploy/compose.yaml", () => {
  const compose = parseYaml(read("deploy/compose.yaml")) as {
    services: Record<string, Record<string, unknown>>;
  };
  type Built = {
    build: { context: string; dockerfile: string };
    image: string;
    environment: Record<string, string>;
    depends_on: Record<string, { condition: string }>;
    command: string[];
  };
  const warden = compose.services.warden as Built & { stop_grace_period: string };
  const migrate = compose.services.migrate as Built;
  const roles = compose.services.roles as Built & { volumes: string[] };
  /** `${NAME:-default}` as Compose fills it in, `${NAME:?…}` with `sample`. */
  const filled = (value: string) =>
    value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1").replace(/\$\{[A-Z_]+:\?[^}]*\}/g, "sample");
  const settings = (service: Built) =>
    Object.fromEntries(Object.entries(service.environment).map(([k, v]) => [k, filled(String(v))]));

  it("makes the roles, migrates as the owner, then serves as the runtime role beside PostgreSQL and Redis", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["migrate", "postgres", "redis", "roles", "warden"]);
    expect(roles.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    expect(migrate.depends_on).toEqual({ roles: { condition: "service_completed_successfully" } });
    expect(warden.depends_on).toEqual({
      migrate: { condition: "service_completed_successfully" },
      redis: { condition: "service_healthy" },
    });
    for (const name of ["postgres", "redis"]) expect(compose.services[name]?.healthcheck).toBeDefined();
    for (const name of ["roles", "migrate"]) expect(compose.services[name]?.restart).toBe("no");
    for (const service of [migrate, warden]) {
      const dockerfile = path.resolve(REPO, "deploy", service.build.context, service.build.dockerfile);
      expect(dockerfile).toBe(path.join(REPO, "Dockerfile"));
      expect(service.image).toBe(warden.image);
    }
    const [from] = (roles.volumes[0] as string).split(":");
    expect(path.resolve(REPO, "deploy", from as string)).toBe(path.join(REPO, "deploy/postgres-roles.sql"));
  });

  it("its Warden settings are ones the configuration reads and accepts, pointed at the two services", () => {
    const env = settings(warden);
    for (const name of Object.keys(env)) expect(SETTINGS.has(name), name).toBe(true);
    const config = loadConfig(env);
    expect(new URL(config.databaseUrl).hostname).toBe("postgres");
    expect(new URL(config.redisUrl as string).hostname).toBe("redis");
    expect(config.workers).toBeGreaterThan(1);
    for (const name of Object.keys(migrate.environment)) expect(SETTINGS.has(name), name).toBe(true);
    expect(new URL(loadConfig(settings(migrate)).databaseUrl).hostname).toBe("postgres");
  });

  it("the owner migrates and grants the role that serves with --no-migrate; the two URLs name them", () => {
    const owner = new URL(settings(migrate).WARDEN_DATABASE_URL as string).username;
    const runtime = new URL(settings(warden).WARDEN_DATABASE_URL as string).username;
    expect(owner).not.toBe(runtime);
    expect(migrate.command).toEqual(["migrate", "--runtime-role", runtime]);
    expect(parseCommandLine(migrate.command)?.name).toBe("migrate");
    expect(warden.command).toEqual(["serve", "--no-migrate"]);
    expect(parseCommandLine(warden.command)?.name).toBe("serve");
    // deploy/postgres-roles.sql's default names are the ones the URLs use.
    const script = read("deploy/postgres-roles.sql");
    expect(script).toContain(`\\set owner ${owner}\n`);
    expect(script).toContain(`\\set runtime ${runtime}\n`);
  });

  it("gives a stopping container the drain's time: the grace period, 5 s for degraded events and a margin", () => {
    const seconds = Number(/^(\d+)s$/.exec(warden.stop_grace_period)?.[1]);
    expect(seconds * 1000).toBeGreaterThanOrEqual(loadConfig({}).shutdownGraceMs + 20_000);
  });
});

describe("deploy/warden.service and deploy/warden.env", () => {
  const unit = read("deploy/warden.service");
  const directives = new Map<string, string>();
  for (const line of unit.split("\n")) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) directives.set(m[1] as string, m[2] as string);
  }
  const envFile = Object.fromEntries(
    read("deploy/warden.env")
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );

  it("starts the installed package's `warden serve` with its settings from an EnvironmentFile", () => {
    const exec = (directives.get("ExecStart") ?? "").split(/\s+/);
    expect(exec[0]).toBe(`/opt/warden/node_modules/.bin/${Object.keys(serverManifest.bin)[0]}`);
    expect(parseCommandLine(exec.slice(1))?.name).toBe("serve");
    expect(directives.get("EnvironmentFile")).toBe("/etc/warden/warden.env");
    expect(directives.get("User")).toBe("warden");
  });

  it("restarts on failure but not on a bad setting (exit 2), and waits out the drain before SIGKILL", async () => {
    expect(directives.get("Restart")).toBe("on-failure");
    const out: string[] = [];
    const badSetting = await runCli(
      ["serve"],
      { out: (l) => out.push(l), err: (l) => out.push(l) },
      {
        WARDEN_VERIFY_DEADLINE_MS: "1000",
      },
    );
    expect(directives.get("RestartPreventExitStatus")).toBe(String(badSetting));
    expect(directives.get("KillSignal")).toBe("SIGTERM");
    const stop = Number(/^(\d+)s$/.exec(directives.get("TimeoutStopSec") ?? "")?.[1]);
    expect(stop * 1000).toBeGreaterThanOrEqual(loadConfig({}).shutdownGraceMs + 20_000);
  });

  it("runs with the hardening set: no privileges, a read-only system, a private /tmp, filtered system calls", () => {
    const expected: Record<string, string> = {
      NoNewPrivileges: "yes",
      CapabilityBoundingSet: "",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      PrivateDevices: "yes",
      ProtectKernelTunables: "yes",
      ProtectKernelModules: "yes",
      ProtectControlGroups: "yes",
      RestrictAddressFamilies: "AF_UNIX AF_INET AF_INET6",
      RestrictNamespaces: "yes",
      SystemCallFilter: "@system-service",
      StateDirectory: "warden",
    };
    for (const [key, value] of Object.entries(expected)) expect(directives.get(key), key).toBe(value);
  });

  it("warden.env names only settings the configuration reads, with values it accepts", () => {
    for (const name of Object.keys(envFile)) expect(SETTINGS.has(name), name).toBe(true);
    expect(() => loadConfig(envFile)).not.toThrow();
    expect(
      envFile.WARDEN_DEGRADED_SPOOL_DIR?.startsWith(`/var/lib/${directives.get("StateDirectory")}/`),
    ).toBe(true);
  });
});

const verifier = (() => {
  try {
    execFileSync("systemd-analyze", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
if (!verifier) {
  skipLoudly(
    "systemd-analyze verify",
    "systemd-analyze is not installed: the unit's verification is SKIPPED",
  );
} else {
  describe("systemd-analyze verify", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-unit-"));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("finds nothing wrong in the unit (its ExecStart pointed at this checkout's warden)", () => {
      const unit = read("deploy/warden.service").replace(
        /^ExecStart=\S+/m,
        `ExecStart=${process.execPath} ${path.join(REPO, "packages/server", serverManifest.bin.warden as string)}`,
      );
      const file = path.join(dir, "warden.service");
      fs.writeFileSync(file, unit);
      const output = execFileSync("systemd-analyze", ["verify", file], { encoding: "utf8", stdio: "pipe" });
      expect(output).toBe("");
    });
  });
}
