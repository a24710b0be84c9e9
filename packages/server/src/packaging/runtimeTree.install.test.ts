import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarden } from "../testing/wardenProcess.js";

/**
 * The image's runtime tree without Docker (no daemon here): the Dockerfile's `deps` stage run as it
 * is written, in a directory outside the repository (its COPY lines from the context, then its RUN
 * line: npm's production install of @warden/server, better-sqlite3's install script, and
 * deploy/runtime-tree.mjs), then the last stage's COPY lines assembled beside it (from `deps`, and
 * from this checkout's build for `--from=build`, less the declarations the build stage deletes). The
 * tree is measured before and after the cut; it holds no development dependency nothing in it needs;
 * and the `warden` it holds runs with nothing else to resolve from: migrate, a tenant and a key,
 * `serve` with the hosting-network data loaded, a verify, SIGTERM.
 *
 * What the image adds (the node:20-bookworm-slim base, its layers) is not measured here; better-
 * sqlite3's install script is given, as a local prebuild, the binary this checkout's install compiled
 * from the same pinned version (packages.install.test.ts does the same), instead of compiling it.
 */
const exec = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const outside = fs.mkdtempSync(path.join(os.tmpdir(), "warden-runtime-tree-"));
const prebuilds = path.join(outside, "prebuilds");
const deps = path.join(outside, "deps");
const image = path.join(outside, "image");
const rootManifest = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as {
  devDependencies: Record<string, string>;
};

/** The Dockerfile's stages: each one's name and instructions, continuation lines joined. */
function stages(): { name: string; steps: { op: string; args: string }[] }[] {
  const out: { name: string; steps: { op: string; args: string }[] }[] = [];
  for (const line of fs
    .readFileSync(path.join(REPO, "Dockerfile"), "utf8")
    .replace(/\\\n/g, " ")
    .split("\n")) {
    const l = line.trim();
    if (l === "" || l.startsWith("#")) continue;
    const [op = "", ...rest] = l.split(/\s+/);
    const args = rest.join(" ");
    if (op.toUpperCase() === "FROM")
      out.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? "final", steps: [] });
    out.at(-1)?.steps.push({ op: op.toUpperCase(), args });
  }
  return out;
}

function size(p: string): number {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.isSymbolicLink() ? 0 : st.size;
  return fs.readdirSync(p).reduce((n, name) => n + size(path.join(p, name)), 0);
}
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;

let cut: { packages: number; before: string; after: string; removed: string[]; trimmed: string[] };

beforeAll(async () => {
  // better-sqlite3's binary as prebuild-install names a prebuilt one (see packages.install.test.ts).
  const module = path.join(REPO, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(fs.readFileSync(path.join(module, "package.json"), "utf8")) as {
    version: string;
  };
  fs.mkdirSync(prebuilds);
  await exec("tar", [
    "-czf",
    path.join(
      prebuilds,
      `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`,
    ),
    "-C",
    module,
    "build/Release/better_sqlite3.node",
  ]);

  const [, depsStage, last] = stages();
  expect(depsStage?.name).toBe("deps");
  const workdir = depsStage?.steps.find((s) => s.op === "WORKDIR")?.args as string;
  expect(workdir).toBe("/opt/warden");
  for (const copy of depsStage?.steps.filter((s) => s.op === "COPY") ?? []) {
    const [to, ...sources] = copy.args.split(/\s+/).reverse();
    for (const source of sources) {
      const target = path.join(deps, to as string, to?.endsWith("/") ? path.basename(source) : "");
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(path.join(REPO, source), target);
    }
  }
  const run = depsStage?.steps.find((s) => s.op === "RUN")?.args as string;
  expect(run).toContain("node deploy/runtime-tree.mjs /opt/warden");
  const { stdout } = await exec("sh", ["-c", run.replaceAll(workdir, deps)], {
    cwd: deps,
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      npm_config_update_notifier: "false",
      npm_config_better_sqlite3_local_prebuilds: prebuilds,
    },
  });
  cut = JSON.parse(stdout.trim().split("\n").at(-1) as string);

  // The last stage's COPY lines: from `deps` (this directory), and from `build` (this checkout's build).
  for (const copy of last?.steps.filter((s) => s.op === "COPY") ?? []) {
    const [from, source, to] = copy.args.split(/\s+/) as [string, string, string];
    const origin =
      from === "--from=deps"
        ? path.join(deps, path.relative(workdir, source))
        : path.join(REPO, path.relative("/src", source));
    expect(from === "--from=deps" || from === "--from=build", copy.args).toBe(true);
    const target = path.join(image, workdir, to, to.endsWith("/") ? path.basename(source) : "");
    fs.cpSync(origin, target, { recursive: true, verbatimSymlinks: true });
  }
  for (const file of fs.readdirSync(path.join(image, workdir, "packages/server/dist"), { recursive: true })) {
    if (/\.d\.ts(\.map)?$|\.tsbuildinfo$/.test(String(file))) {
      fs.rmSync(path.join(image, workdir, "packages/server/dist", String(file)));
    }
  }
}, 300_000);

afterAll(() => fs.rmSync(outside, { recursive: true, force: true }), 120_000);

describe("the image's runtime tree (the Dockerfile's deps stage, then its last stage's files)", () => {
  const tree = () => path.join(image, "opt/warden");
  const modules = () => path.join(tree(), "node_modules");

  it("is cut to the packages the server reaches: measured before and after", () => {
    const runtime = size(tree());
    const serverFiles = size(path.join(tree(), "packages/server"));
    console.log(
      `runtime tree: node_modules ${cut.before} installed, ${cut.after} after the cut (${cut.packages} packages; ` +
        `${cut.removed.length} removed: ${cut.removed.join(", ")}); the server's own files ${mb(serverFiles)} MB; ` +
        `all that the last stage copies: ${mb(runtime)} MB`,
    );
    expect(cut.removed).toContain("node_modules/@types/node");
    expect(Number.parseFloat(cut.after)).toBeLessThan(Number.parseFloat(cut.before));
    // The cut's own figure is the tree the image copies.
    expect(Math.abs(mb(size(modules())) - Number.parseFloat(cut.after))).toBeLessThan(1);
  });

  it("holds no development dependency that nothing in it needs (yaml stays: @fastify/swagger loads it)", () => {
    const needed = new Set<string>();
    const manifests: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (
          entry.name === "package.json" &&
          path.basename(path.dirname(path.dirname(p))).match(/^(node_modules|@.*)$/)
        )
          manifests.push(p);
      }
    };
    walk(modules());
    for (const file of manifests) {
      const m = JSON.parse(fs.readFileSync(file, "utf8")) as { dependencies?: Record<string, string> };
      for (const name of Object.keys(m.dependencies ?? {})) needed.add(name);
    }
    const present = Object.keys(rootManifest.devDependencies).filter((d) =>
      fs.existsSync(path.join(modules(), d)),
    );
    expect(present.filter((d) => !needed.has(d))).toEqual([]);
    expect(present).toEqual(["yaml"]);
    for (const gone of ["@types/node", "undici-types", "typescript", "vitest", "@warden/client"]) {
      expect(fs.existsSync(path.join(modules(), gone)), gone).toBe(false);
    }
    // Nothing of the cut's leftovers: declarations, C sources, other platforms' binaries.
    expect(fs.existsSync(path.join(modules(), "better-sqlite3/deps"))).toBe(false);
    expect(fs.readdirSync(path.join(modules(), "sodium-native/prebuilds"))).toEqual([
      `${process.platform}-${process.arch}`,
    ]);
  });

  it("runs the warden it holds: migrate, a tenant and a key, serve with its data, a verify, SIGTERM", async () => {
    const bin = path.join(tree(), "packages/server/bin/warden.js");
    const env = {
      ...process.env,
      WARDEN_DATABASE_URL: `sqlite:${path.join(outside, "warden.db")}`,
      WARDEN_LOG_LEVEL: "warn",
    };
    const cli = async (...args: string[]) =>
      (await exec(process.execPath, [bin, ...args], { cwd: outside, env })).stdout;
    expect(await cli("migrate")).toContain("schema up to date");
    await cli("tenant", "create", "smoke");
    const { apiKey } = JSON.parse(
      await cli("key", "create", "--tenant", "smoke", "--scopes", "verify:write", "--json"),
    ) as {
      apiKey: string;
    };
    const served = await startWarden(
      { WARDEN_DATABASE_URL: env.WARDEN_DATABASE_URL, WARDEN_LOG_LEVEL: "warn" },
      30_000,
      [],
      { command: process.execPath, args: [bin], cwd: outside },
    );
    try {
      // Verify's deadline is the service's 30 ms, which two busy shared cores overrun now and then
      // (the answer is then the degraded challenge): up to 40 tries for one scored answer.
      let scored: { reasonDetails: { code: string }[] } | undefined;
      for (let i = 0; i < 40 && !scored; i++) {
        const res = await fetch(`${served.url}/v1/verify`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          // A hosting network's address: scored against the IP-to-ASN data the cut kept.
          body: JSON.stringify({
            action: "signup",
            session: `s-${i}`,
            subject: { ipTrunc: "3.5.140.0/24", userAgent: "curl/8.5.0" },
          }),
        });
        expect(res.status).toBe(200);
        const verdict = (await res.json()) as { degraded: boolean; reasonDetails: { code: string }[] };
        if (!verdict.degraded) scored = verdict;
        else await new Promise((r) => setTimeout(r, 250));
      }
      expect(scored, served.output().slice(-3000)).toBeDefined();
      expect(scored?.reasonDetails.map((d) => d.code)).toContain("hosting_network");
    } finally {
      expect(await served.stop()).toBe(0);
    }
  }, 120_000);
});
