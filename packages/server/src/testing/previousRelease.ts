import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { WardenLaunch } from "./wardenProcess.js";

const exec = promisify(execFile);

/**
 * The release whose processes must keep scoring while this one migrates, and which must run again on
 * this one's schema for a rollback: its commit and the migrations its schema has (the fixture the
 * upgrade test checks the database it migrated against). Move it forward when a release is cut.
 */
export const PREVIOUS_RELEASE = {
  commit: "3b4ef4ea010ad0040aa7a137f3e6379e158c46de",
  migrations: [
    "0001_core",
    "0002_feedback",
    "0003_challenges",
    "0004_payment_preauth",
    "0005_agents_and_policies",
    "0006_attempt_binding",
    "0007_readiness_probe",
    "0008_console",
    "0009_one_clear_per_event",
    "0010_challenge_completion_key",
    "0011_feedback_resolutions",
    "0012_event_search",
    "0013_attempt_links",
    "0014_idempotency_event",
    "0015_event_partitions",
  ],
} as const;

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

/**
 * Builds the previous release's server from this clone's history: its `packages/server` (and the
 * base tsconfig) taken out with `git archive` into a temporary directory, compiled by this checkout's
 * TypeScript against this checkout's node_modules (symlinked; the previous release's dependencies are
 * these, or it would not be the previous release of this tree for long). About 20 s. Resolves how to
 * run its `warden`, or why it cannot be built (the commit is not in this clone: a shallow clone).
 */
export async function buildPreviousRelease(): Promise<
  { launch: WardenLaunch; dir: string; remove(): void } | { unavailable: string }
> {
  try {
    await exec("git", ["cat-file", "-e", `${PREVIOUS_RELEASE.commit}^{commit}`], { cwd: REPOSITORY });
  } catch {
    const { stdout } = await exec("git", ["rev-parse", "--is-shallow-repository"], { cwd: REPOSITORY }).catch(
      () => ({ stdout: "unknown" }),
    );
    return {
      unavailable: `the previous release's commit ${PREVIOUS_RELEASE.commit.slice(0, 12)} is not in this clone (shallow: ${stdout.trim()}); clone with its history (git fetch --unshallow)`,
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-previous-"));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    await exec(
      "sh",
      [
        "-c",
        `git archive ${PREVIOUS_RELEASE.commit} packages/server tsconfig.base.json | tar -x -C "${dir}"`,
      ],
      { cwd: REPOSITORY, maxBuffer: 64 * 1024 * 1024 },
    );
    fs.symlinkSync(path.join(REPOSITORY, "node_modules"), path.join(dir, "node_modules"));
    const own = path.join(REPOSITORY, "packages/server/node_modules");
    if (fs.existsSync(own)) fs.symlinkSync(own, path.join(dir, "packages/server/node_modules"));
    const server = path.join(dir, "packages/server");
    // Type errors do not stop the emit, and the previous release type-checked when it was cut.
    await exec(process.execPath, [
      path.join(REPOSITORY, "node_modules/typescript/bin/tsc"),
      "-p",
      server,
    ]).catch(() => undefined);
    const bin = path.join(server, "bin/warden.js");
    if (!fs.existsSync(path.join(server, "dist/cli/main.js")))
      throw new Error("the previous release did not build");
    return { launch: { command: process.execPath, args: [bin], cwd: server }, dir, remove };
  } catch (err) {
    remove();
    throw err;
  }
}
