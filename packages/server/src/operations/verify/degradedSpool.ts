import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import path from "node:path";
import type { EventRecord } from "../../domain.js";

/**
 * Where degraded verdicts' events go when a process shuts down before the store took them: one file
 * per shutdown in a spool directory, read back by the next process that starts with the same
 * directory (on the same host or a shared volume). Events hold protected signals only (hashes,
 * truncated networks), never raw email or IP, so a spool file holds no more than the store would.
 */
const SPOOLED = /^degraded-[\w.-]+\.jsonl$/;

/** Writes `events` as one new spool file (written whole, then renamed into place); returns its path. */
export async function spoolEvents(dir: string, events: readonly EventRecord[]): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const name = `degraded-${Date.now()}-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`;
  const partial = path.join(dir, `.${name}.partial`);
  const file = await open(partial, "wx", 0o600);
  try {
    await file.writeFile(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    await file.sync();
  } finally {
    await file.close();
  }
  const target = path.join(dir, name);
  await rename(partial, target);
  return target;
}

export interface ClaimedEvents {
  events: EventRecord[];
  /** Lines that were not an event (a spool file edited or cut by hand); they are dropped. */
  unreadable: number;
}

/**
 * Takes every spool file in `dir` for this process: each is renamed before it is read, so of several
 * processes starting at once exactly one gets a file. The files are removed once read; the events
 * then wait in the taker's queue like any degraded event.
 */
export async function claimSpooledEvents(dir: string): Promise<ClaimedEvents> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { events: [], unreadable: 0 };
    throw err;
  }
  const claimed: ClaimedEvents = { events: [], unreadable: 0 };
  for (const name of names.filter((n) => SPOOLED.test(n)).sort()) {
    const mine = path.join(dir, `.claimed-${process.pid}-${randomBytes(4).toString("hex")}-${name}`);
    try {
      await rename(path.join(dir, name), mine);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue; // another process took it
      throw err;
    }
    for (const line of (await readFile(mine, "utf8")).split("\n")) {
      if (line === "") continue;
      const event = parseEvent(line);
      if (event) claimed.events.push(event);
      else claimed.unreadable++;
    }
    await unlink(mine);
  }
  return claimed;
}

function parseEvent(line: string): EventRecord | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== "object" || value === null) return undefined;
    const e = value as Record<string, unknown>;
    const ok =
      typeof e.id === "string" &&
      typeof e.tenantId === "string" &&
      typeof e.keyId === "string" &&
      typeof e.createdAt === "number" &&
      typeof e.action === "string" &&
      e.degraded === true;
    return ok ? (value as EventRecord) : undefined;
  } catch {
    return undefined;
  }
}
