// A person's hands: X input events through xdotool (XTEST), at a person's pace. Nothing here talks to
// the browser; the events reach it as they would from a mouse and a keyboard.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { sleep } from "./time.mjs";

const exec = promisify(execFile);
/** A whole number between lo and hi, inclusive. */
export const between = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1));

/** @param {NodeJS.ProcessEnv} env */
export function hands(env) {
  const xdo = async (...args) => (await exec("xdotool", args, { env })).stdout;
  return {
    xdo,
    /** The pointer's position. */
    async where() {
      const out = await xdo("getmouselocation", "--shell");
      return { x: Number(/X=(\d+)/.exec(out)?.[1] ?? 0), y: Number(/Y=(\d+)/.exec(out)?.[1] ?? 0) };
    },
    /** Moves the pointer to (x, y) along a slightly curved path in several steps, slowing at the end. */
    async moveTo(x, y) {
      const from = await this.where();
      const steps = between(9, 16);
      const bend = { x: between(-60, 60), y: between(-40, 40) };
      for (let i = 1; i <= steps; i++) {
        const t = i / steps;
        const ease = t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2;
        const arc = Math.sin(Math.PI * t);
        const px = Math.round(from.x + (x - from.x) * ease + bend.x * arc);
        const py = Math.round(from.y + (y - from.y) * ease + bend.y * arc);
        await xdo("mousemove", String(px), String(py));
        await sleep(between(12, 45));
      }
      await xdo("mousemove", String(x), String(y));
    },
    /** A click with the left button, held as long as a finger holds it. */
    async click() {
      await xdo("mousedown", "1");
      await sleep(between(60, 140));
      await xdo("mouseup", "1");
    },
    /** Types text one character at a time, 80 to 200 ms apart. */
    async type(text) {
      for (const ch of text) {
        await xdo("type", "--delay", "0", "--", ch);
        await sleep(between(80, 200));
      }
    },
    async key(name) {
      await xdo("key", name);
    },
    /** Waits for a visible window of process `pid` (Chromium's, by _NET_WM_PID); resolves its id. */
    async waitWindow(pid, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        try {
          const ids = (await xdo("search", "--onlyvisible", "--pid", String(pid))).trim().split("\n");
          if (ids[0]) return ids[0];
        } catch {
          // none yet: xdotool exits 1
        }
        if (Date.now() > end) throw new Error(`no window of process ${pid} appeared`);
        await sleep(200);
      }
    },
    /** The title of a window (Chromium's says which page it shows). */
    async title(id) {
      return (await xdo("getwindowname", id)).trim();
    },
  };
}
