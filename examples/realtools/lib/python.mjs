// The Python tools (requirements.txt, exact versions with their hashes) in a venv of the run's own,
// made when a class that needs them starts: nothing is installed outside the run's temp dir, and
// nothing is downloaded at run time but the pinned wheels through pip's configured index.
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
export const REQUIREMENTS = path.resolve(here, "../requirements.txt");
export const PYTHON = process.env.WARDEN_PYTHON ?? "python3";

/** @type {Map<string, Promise<string>>} */
const venvs = new Map();

/**
 * The venv's python under `tempRoot` (made once per run): `python3 -m venv`, then
 * `pip install --require-hashes --only-binary=:all: -r requirements.txt`.
 * @param {string} tempRoot
 * @returns {Promise<string>}
 */
export function pythonTools(tempRoot) {
  let made = venvs.get(tempRoot);
  if (!made) {
    made = (async () => {
      const dir = path.join(tempRoot, "venv");
      await exec(PYTHON, ["-m", "venv", dir]);
      const python = path.join(dir, "bin", "python");
      // --retries 0: an index this machine cannot reach fails at once instead of after a minute.
      await exec(
        python,
        [
          "-m",
          "pip",
          "install",
          "--quiet",
          "--disable-pip-version-check",
          "--retries",
          "0",
          "--require-hashes",
          "--only-binary=:all:",
          "-r",
          REQUIREMENTS,
        ],
        { maxBuffer: 16 * 1024 * 1024 },
      );
      return python;
    })();
    venvs.set(tempRoot, made);
    made.catch(() => venvs.delete(tempRoot));
  }
  return made;
}
