import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StoreUnavailableError } from "../interfaces.js";
import { readPacing } from "./readPacing.js";

/**
 * The console's long reads on the primary take turns and leave the database to verify for as long
 * as they held it (share 0.5): however many operators read at once, one process's reads hold
 * PostgreSQL at most half the time. Fake timers: each read "takes" a set time.
 */
describe("the console's reads, paced on the primary", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A read that takes `ms` and records when it started and ended. */
  const timedRead = (log: string[], name: string, ms: number) => async () => {
    log.push(`${name} start ${Date.now()}`);
    await new Promise((r) => setTimeout(r, ms));
    log.push(`${name} end ${Date.now()}`);
    return name;
  };

  it("one at a time, each after the one before and a pause as long as it took", async () => {
    const pace = readPacing({ share: 0.5, maxWaitMs: 10_000 }, Date.now);
    const log: string[] = [];
    const t0 = Date.now();
    const reads = [
      pace(timedRead(log, "a", 100)),
      pace(timedRead(log, "b", 40)),
      pace(timedRead(log, "c", 10)),
    ];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await Promise.all(reads)).toEqual(["a", "b", "c"]);
    expect(log.map((l) => l.replace(/\d+$/, (t) => String(Number(t) - t0)))).toEqual([
      "a start 0",
      "a end 100",
      "b start 200",
      "b end 240",
      "c start 280",
      "c end 290",
    ]);
  });

  it("share 1 (a replica): back to back", async () => {
    const pace = readPacing({ share: 1, maxWaitMs: 10_000 }, Date.now);
    const log: string[] = [];
    const t0 = Date.now();
    const reads = [pace(timedRead(log, "a", 100)), pace(timedRead(log, "b", 40))];
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all(reads);
    expect(log.map((l) => l.replace(/\d+$/, (t) => String(Number(t) - t0)))).toEqual([
      "a start 0",
      "a end 100",
      "b start 100",
      "b end 140",
    ]);
  });

  it("a read whose turn does not come within maxWaitMs is refused at once, and the reads behind it go on", async () => {
    const pace = readPacing({ share: 0.5, maxWaitMs: 250 }, Date.now);
    const log: string[] = [];
    const t0 = Date.now();
    const first = pace(timedRead(log, "a", 200));
    const refused = pace(timedRead(log, "b", 10)).catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(250);
    expect(await refused).toBeInstanceOf(StoreUnavailableError);
    // The refused read never runs; one asked after the refusal runs once a's pause has passed.
    const third = pace(timedRead(log, "c", 10));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await first).toBe("a");
    expect(await third).toBe("c");
    expect(log.map((l) => l.replace(/\d+$/, (t) => String(Number(t) - t0)))).toEqual([
      "a start 0",
      "a end 200",
      "c start 400",
      "c end 410",
    ]);
  });

  it("a read that fails passes its turn on after its pause", async () => {
    const pace = readPacing({ share: 0.5, maxWaitMs: 10_000 }, Date.now);
    const failing = pace(async () => {
      await new Promise((r) => setTimeout(r, 50));
      throw new Error("statement timeout");
    }).catch((err: Error) => err.message);
    const log: string[] = [];
    const t0 = Date.now();
    const next = pace(timedRead(log, "b", 10));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await failing).toBe("statement timeout");
    expect(await next).toBe("b");
    expect(log[0]).toBe(`b start ${t0 + 100}`);
  });
});
