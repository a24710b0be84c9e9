// An X display of this run's own: Xvfb picks a free display number itself (-displayfd) and listens on
// no TCP port. Headful browsers and the people's Chromium windows run on it.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";

export const SCREEN = { width: 1366, height: 900 };
/**
 * The people's display: a person's computer is not the machine a campaign runs on, so their browsers
 * report a screen of their own (on this one machine, the rest of their environment is the same).
 */
export const PERSON_SCREEN = { width: 1600, height: 900 };

/** Whether a program is on PATH (Xvfb, xdotool). */
export function hasProgram(name) {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export const CHROMIUM_PATH = process.env.WARDEN_CHROMIUM ?? "/usr/bin/chromium";
export const chromiumInstalled = () => fs.existsSync(CHROMIUM_PATH);

/** What the suite needs that this machine lacks, as a list of names (empty when all is there). */
export function missingTools() {
  const missing = [];
  if (!chromiumInstalled()) missing.push(`Chromium (${CHROMIUM_PATH})`);
  if (!hasProgram("Xvfb")) missing.push("Xvfb");
  if (!hasProgram("xdotool")) missing.push("xdotool");
  return missing;
}

/** Starts Xvfb on a free display with this screen; resolves { display, env, close }. */
export async function startDisplay(screen = SCREEN) {
  const child = spawn(
    "Xvfb",
    ["-displayfd", "3", "-nolisten", "tcp", "-screen", "0", `${screen.width}x${screen.height}x24`],
    { stdio: ["ignore", "ignore", "pipe", "pipe"] },
  );
  let errors = "";
  child.stderr?.on("data", (d) => {
    errors += d;
  });
  const display = await new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`Xvfb did not start in 10 s: ${errors}`)), 10_000);
    child.once("exit", (code) => reject(new Error(`Xvfb exited with ${code}: ${errors}`)));
    child.stdio[3]?.on("data", (d) => {
      text += d;
      if (text.includes("\n")) {
        clearTimeout(timer);
        resolve(`:${text.trim()}`);
      }
    });
  });
  return {
    display,
    env: { ...process.env, DISPLAY: display },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      // Programs Xvfb started (xkbcomp) may hold these pipes open after it exits.
      child.stderr?.destroy();
      child.stdio[3]?.destroy();
    },
  };
}
