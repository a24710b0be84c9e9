import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarden } from "../testing/wardenProcess.js";

/**
 * The publishable packages as a user outside the repository gets them: `npm pack` of @warden/server,
 * @warden/client and @warden/browser, the tarballs installed into a directory of their own (no
 * workspace, no repository above it), a strict TypeScript app compiled against the installed client
 * and browser packages, and the installed `warden` binary run: migrate, make a key, serve the API and
 * the console, drain on SIGTERM. Needs the repository built (`npm run build`) and the npm cache warm.
 *
 * better-sqlite3's install script takes a prebuilt binary when prebuild-install finds one, as a user's
 * install downloads one from the project's releases; only this machine reaches no such host, and
 * compiling instead took 2-3 minutes of the test. It is given, as a local prebuild, the binary the
 * repository's own install built from the same pinned version for this Node (a version mismatch
 * names another file, and the install compiles as before).
 */
const exec = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const rootManifest = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as {
  devDependencies: Record<string, string>;
};
const outside = fs.mkdtempSync(path.join(os.tmpdir(), "warden-install-"));
const packs = path.join(outside, "packs");
const app = path.join(outside, "app");
let installLog = "";

const prebuilds = path.join(outside, "prebuilds");

const npm = (cwd: string, ...args: string[]) =>
  exec("npm", args, {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      npm_config_update_notifier: "false",
      npm_config_better_sqlite3_local_prebuilds: prebuilds,
    },
  });

/**
 * The repository's compiled better-sqlite3 packed as prebuild-install names and lays out a prebuilt
 * binary (`{name}-v{version}-node-v{abi}-{platform}-{arch}.tar.gz` holding build/Release/*.node).
 */
async function packLocalPrebuild(): Promise<void> {
  const module = path.join(REPO, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(fs.readFileSync(path.join(module, "package.json"), "utf8")) as {
    version: string;
  };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  fs.mkdirSync(prebuilds);
  await exec("tar", ["-czf", path.join(prebuilds, name), "-C", module, "build/Release/better_sqlite3.node"]);
}

/** The installed `warden` (its bin, resolved through the app's node_modules/.bin) with `env`. */
const warden = (env: Record<string, string>, ...args: string[]) =>
  exec(path.join(app, "node_modules", ".bin", "warden"), args, { cwd: app, env: { ...process.env, ...env } });

beforeAll(async () => {
  fs.mkdirSync(packs);
  fs.mkdirSync(app);
  await packLocalPrebuild();
  const packed = JSON.parse(
    (
      await npm(
        REPO,
        "pack",
        "--json",
        "--pack-destination",
        packs,
        "-w",
        "@warden/server",
        "-w",
        "@warden/client",
        "-w",
        "@warden/browser",
      )
    ).stdout,
  ) as { filename: string }[];
  fs.writeFileSync(
    path.join(app, "package.json"),
    // better-sqlite3 builds its native module at install: npm runs no dependency's script unasked.
    JSON.stringify(
      {
        name: "warden-install-check",
        private: true,
        type: "module",
        allowScripts: { "better-sqlite3": true },
      },
      null,
      2,
    ),
  );
  const { stdout, stderr } = await npm(
    app,
    "install",
    "--prefer-offline",
    "--no-audit",
    "--no-fund",
    ...packed.map((p) => path.join(packs, p.filename)),
    `@types/node@${rootManifest.devDependencies["@types/node"]}`,
  );
  installLog = stdout + stderr;
}, 900_000);

afterAll(() => fs.rmSync(outside, { recursive: true, force: true }));

describe("the packages installed from their tarballs, outside the repository", () => {
  it("install without an engine warning on this Node (no dependency declares a newer one)", () => {
    expect(installLog).not.toContain("EBADENGINE");
    expect(fs.realpathSync(path.join(app, "node_modules/@warden/server")).startsWith(outside)).toBe(true);
  });

  it("a strict TypeScript app compiles against @warden/client and @warden/browser (both ship declarations), and a page that loads /warden/warden.js or the script-tag build without a bundler is typed", async () => {
    fs.writeFileSync(
      path.join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          lib: ["ES2023", "DOM", "DOM.Iterable"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          verbatimModuleSyntax: true,
          noImplicitAny: true,
          noEmit: true,
          types: ["node"],
        },
        include: ["app.ts", "page.ts"],
      }),
    );
    fs.writeFileSync(
      path.join(app, "app.ts"),
      [
        'import { WardenClient, type VerifyResult } from "@warden/client";',
        'import { collectSignals, solveProofOfWork, type Solution, WardenChallengeElement } from "@warden/browser";',
        "",
        'const client = new WardenClient({ baseUrl: "http://127.0.0.1:8080", apiKey: "wdn_x" });',
        "export const verify = (): Promise<VerifyResult> =>",
        '  client.verify({ action: "signup", subject: { userAgent: "curl/8.5.0" } });',
        "export const solve = (seed: string): Promise<Solution> => solveProofOfWork({ seed, difficulty: 4 });",
        "export const signals = collectSignals;",
        "// The element is known to querySelector by its tag (HTMLElementTagNameMap).",
        'const element: WardenChallengeElement | null = document.querySelector("warden-challenge");',
        "element?.cancel();",
        "",
      ].join("\n"),
    );
    // A page compiled without a bundler: the module as the site serves it, and the script-tag build.
    fs.writeFileSync(
      path.join(app, "page.ts"),
      [
        '/// <reference types="@warden/browser/page" />',
        'import { type PageReport, watchPage } from "/warden/warden.js";',
        "",
        "export const report = (): Promise<PageReport> => watchPage().report();",
        "export const fromScriptTag = (): Promise<PageReport> => WardenBrowser.watchPage().report();",
        "// @ts-expect-error: the types are the package's own, so a name it does not export is an error",
        'export { notAnExport } from "/warden/warden.js";',
        "",
      ].join("\n"),
    );
    const tsc = path.join(REPO, "node_modules", "typescript", "bin", "tsc");
    const result = await exec(process.execPath, [tsc, "-p", app]).catch((err: { stdout: string }) => err);
    expect(result.stdout).toBe("");
  }, 120_000);

  it("the installed warden migrates a new SQLite database, serves the API and the console from the package, and drains on SIGTERM", async () => {
    const env = {
      WARDEN_DATABASE_URL: `sqlite:${path.join(app, "data", "warden.db")}`,
      WARDEN_DEGRADED_SPOOL_DIR: path.join(app, "data", "spool"),
      WARDEN_LOG_LEVEL: "warn",
    };
    expect((await warden(env, "migrate")).stdout).toMatch(/^schema up to date: \d+ migrations/);
    await warden(env, "tenant", "create", "acme");
    const { apiKey } = JSON.parse(
      (await warden(env, "key", "create", "--tenant", "acme", "--scopes", "verify:write", "--json")).stdout,
    ) as { apiKey: string };

    const installed = { command: path.join(app, "node_modules", ".bin", "warden"), args: [], cwd: app };
    const served = await startWarden(env, 30_000, [], installed);
    try {
      const verdict = await fetch(`${served.url}/v1/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ action: "signup", subject: { userAgent: "curl/8.5.0" } }),
      });
      expect(verdict.status).toBe(200);
      expect(((await verdict.json()) as { decision: string }).decision).toBe("challenge");
      // The console's files come from inside the installed package.
      const page = await fetch(`${served.url}/console/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('src="./console.js"');
      expect((await fetch(`${served.url}/console/console.js`)).status).toBe(200);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  }, 120_000);
});
