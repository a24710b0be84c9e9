import fs from "node:fs";

/**
 * CPU time a process has used so far (user + system, all its threads), in ms, from Linux's
 * /proc/<pid>/stat (utime and stime, in clock ticks of 1/100 s: USER_HZ). Undefined without /proc.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}
