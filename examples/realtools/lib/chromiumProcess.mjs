// Chromium as a person runs it: a plain process with a profile of its own, no automation protocol
// (no --remote-debugging-*, no --enable-automation), on this run's X display. It accepts the doors'
// self-signed test certificate (--ignore-certificate-errors, fixtures/README.md), in every window this
// suite starts (the person's, the calibration's and the capture's alike, so all look the same).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CHROMIUM_PATH } from "./display.mjs";
import { removeDir, sleep } from "./time.mjs";
import { hands } from "./xdotool.mjs";

export const WINDOW = { width: 1280, height: 860 };

/** Chromium refuses to start as root without --no-sandbox (containers); a person's machine needs none. */
export const sandboxArgs = () => (process.getuid?.() === 0 ? ["--no-sandbox"] : []);

/**
 * Starts Chromium on `url`; resolves { close() } (SIGTERM, then the profile is removed). With
 * typeUrl, Chromium starts on a blank page and the address is typed into its address bar (xdotool),
 * as a person opens a site: with an extension's declarativeNetRequest rules, a start-up URL can wait
 * for the rules forever.
 * @param {{ url: string, env: NodeJS.ProcessEnv, tempRoot: string, extraArgs?: string[] | ((profile: string) => string[]), typeUrl?: boolean }} opts
 *   extraArgs: flags, or a function of the fresh profile's directory returning them
 */
export async function launchPersonChromium({ url, env, tempRoot, extraArgs = [], typeUrl = false }) {
  const profile = fs.mkdtempSync(path.join(tempRoot, "person-profile-"));
  const child = spawn(
    CHROMIUM_PATH,
    [
      ...sandboxArgs(),
      `--user-data-dir=${profile}`,
      "--no-first-run",
      "--no-default-browser-check",
      "--window-position=0,0",
      `--window-size=${WINDOW.width},${WINDOW.height}`,
      "--ignore-certificate-errors",
      ...(typeof extraArgs === "function" ? extraArgs(profile) : extraArgs),
      typeUrl ? "about:blank" : url,
    ],
    { env, stdio: ["ignore", "ignore", "ignore"], detached: false },
  );
  const exited = new Promise((r) => child.once("exit", r));
  const hand = hands(env);
  /** Types the address into the address bar (again), as a person does when a page does not come. */
  let window = "";
  const typeAddress = async () => {
    window ||= await hand.waitWindow(child.pid);
    await hand.xdo("windowfocus", "--sync", window);
    await hand.key("ctrl+l");
    await sleep(300);
    await hand.xdo("type", "--delay", "40", url);
    await hand.key("Return");
  };
  if (typeUrl) {
    window = await hand.waitWindow(child.pid);
    await sleep(2500);
    await typeAddress();
  }
  return {
    pid: child.pid,
    /** With typeUrl: types the address again (a no-op otherwise). */
    async retype() {
      if (typeUrl) await typeAddress();
    },
    /** The window's title ("" before it has one). */
    async title() {
      window ||= await hand.waitWindow(child.pid).catch(() => "");
      return window ? hand.title(window).catch(() => "") : "";
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
      await removeDir(profile);
    },
  };
}
