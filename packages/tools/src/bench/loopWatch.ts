import fs from "node:fs";

/**
 * The server's longest event-loop block while watched: its main thread's own CPU time between two
 * turns of a 1 ms timer (Linux's per-thread schedstat; elsewhere the wall-clock gap), so that the
 * other processes of this machine holding the core do not count. Watched only when asked: the
 * timer costs the server a few percent of a core.
 */
export function loopWatch(): { start(): void; stop(): number } {
  const stat = "/proc/thread-self/schedstat";
  const cpu = fs.existsSync(stat)
    ? () => Number(fs.readFileSync(stat, "utf8").split(" ")[0]) / 1e6
    : () => performance.now();
  let timer: NodeJS.Timeout | undefined;
  let worst = 0;
  return {
    start() {
      worst = 0;
      let last = cpu();
      timer = setInterval(() => {
        const now = cpu();
        worst = Math.max(worst, now - last);
        last = now;
      }, 1);
    },
    stop() {
      clearInterval(timer);
      return Math.round(worst * 10) / 10;
    },
  };
}
