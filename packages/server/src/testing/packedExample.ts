import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * An example app as a user gets it: @warden/client and @warden/browser packed with the commands
 * docs/integration.md prints (into a folder that does not exist yet, as the guide's does on a new
 * machine), the example's files copied into a directory of its own outside the repository, its
 * packages installed there from the tarballs and the npm cache, and built with its own `npm run
 * build` (strict TypeScript against the installed declarations). Needs the repository built.
 */
const exec = promisify(execFile);
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
/** Where the guide packs to; the test packs to a fresh folder in its place. */
const GUIDE_FOLDER = "/tmp/warden-packages";

/** The guide's install commands: the `sh` block under "Install the packages in your app". */
export function guideCommands(): { pack: string[]; install: string } {
  const guide = fs.readFileSync(path.join(REPO, "docs/integration.md"), "utf8");
  const block = /## 0\. Install the packages in your app[\s\S]*?```sh\n([\s\S]*?)```/.exec(guide)?.[1];
  if (!block) throw new Error("docs/integration.md has no install block");
  const lines = block.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
  const install = lines.find((l) => l.startsWith("npm install "));
  if (!install) throw new Error("the install block has no npm install line");
  return { pack: lines.filter((l) => l !== install), install };
}

const run = (cwd: string, command: string, env: Record<string, string> = {}) =>
  exec("sh", ["-c", command], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", ...env },
  });

export interface PackedExample {
  /** The app's directory, outside the repository. */
  dir: string;
  /** What npm printed while installing (for an engine or peer warning). */
  installLog: string;
  remove(): void;
}

export async function installExample(
  example: string,
  env: Record<string, string> = {},
): Promise<PackedExample> {
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), `warden-${example}-`));
  const folder = path.join(outside, "warden-packages");
  const swap = (line: string) => line.split(GUIDE_FOLDER).join(folder);
  const { pack, install } = guideCommands();
  for (const line of pack) await run(REPO, swap(line));
  const dir = path.join(outside, "app");
  const source = path.join(REPO, "examples", example);
  fs.cpSync(source, dir, {
    recursive: true,
    // What a build in the repository left (Next.js's .next/ included) is not the example's.
    filter: (from) =>
      !/(^|\/)(node_modules|dist|data|\.next)(\/|$)|\.test\.ts$/.test(path.relative(source, from)),
  });
  // The workspace's own names for the two packages: the guide's install line puts the tarballs there.
  const manifestFile = path.join(dir, "package.json");
  const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8")) as {
    dependencies: Record<string, string>;
  };
  delete manifest.dependencies["@warden/client"];
  delete manifest.dependencies["@warden/browser"];
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  const { stdout, stderr } = await run(dir, `${swap(install)} --prefer-offline --no-audit`);
  await run(dir, "npm run build", env);
  return {
    dir,
    installLog: stdout + stderr,
    remove: () => fs.rmSync(outside, { recursive: true, force: true }),
  };
}

/**
 * The lines of glue an example holds: every line of its server code that is not blank or a comment,
 * and the lines of its page that name Warden (the script tag, the form's data-warden).
 */
export function glueLines(example: string, server: string[], pages: string[]): number {
  const read = (file: string) =>
    fs.readFileSync(path.join(REPO, "examples", example, file), "utf8").split("\n");
  const code = server.flatMap(read).filter((l) => l.trim() !== "" && !/^\s*(\/\/|\/\*|\*)/.test(l)).length;
  const page = pages.flatMap(read).filter((l) => /warden/i.test(l)).length;
  return code + page;
}
