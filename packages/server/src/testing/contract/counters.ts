import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CounterStore } from "../../store/interfaces.js";
import { PURGE_CHUNK } from "../../store/sql/purge.js";

export interface CounterContractOptions {
  /** Counters that expire by themselves (Redis): purgeExpired has nothing to delete. */
  countersExpireThemselves?: boolean;
}

/**
 * The counter contract (CounterStore), registered in the caller's describe: `handles` gives two
 * handles on the same counters once its beforeAll has opened them. The store contract runs it on
 * every store; counterContract runs it alone, on counters without a store (a Redis Cluster, Sentinel).
 */
export function counterTests(
  handles: () => { a: CounterStore; b: CounterStore },
  options: CounterContractOptions = {},
): void {
  it("counts concurrent hits without losing any", async () => {
    const { a, b } = handles();
    const now = 1_000_000;
    const hits = Array.from({ length: 60 }, (_, i) =>
      (i % 2 ? a : b).hit([{ name: "c1", windowMs: 60_000 }], now),
    );
    const readings = (await Promise.all(hits)).map((r) => r[0]?.current);
    expect(readings.sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  });

  it("counts requests that hit a shared counter and their own at once: each reads the shared count as of its own hit", async () => {
    const { a, b } = handles();
    const now = 2_000_000;
    const requests = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a : b).hit(
        [
          { name: "shared", windowMs: 60_000 },
          { name: `own${i}`, windowMs: 60_000 },
        ],
        now,
      ),
    );
    const readings = await Promise.all(requests);
    expect(readings.map((r) => r[0]?.current).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    expect(readings.map((r) => r[1]?.current)).toEqual(Array.from({ length: 40 }, () => 1));
    // Requests on both sides of a bucket boundary, at once: each bucket counts its own.
    const w = 60_000;
    const across = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        a.hit([{ name: "edge", windowMs: w }], i % 2 ? 41 * w - 1 : 41 * w),
      ),
    );
    expect(across.filter((_, i) => i % 2).map((r) => r[0]?.current)).toEqual([1, 2, 3, 4, 5]);
    expect(across.filter((_, i) => i % 2 === 0).map((r) => r[0]?.current)).toEqual([1, 2, 3, 4, 5]);
  });

  it("hits a counter named twice in one call once: both readings are that hit's", async () => {
    const { a, b } = handles();
    const now = 3_000_000;
    const twice = [
      { name: "dup", windowMs: 60_000 },
      { name: "own", windowMs: 60_000 },
      { name: "dup", windowMs: 60_000 },
      { name: "dup", windowMs: 3_600_000 },
    ];
    const first = await a.hit(twice, now);
    expect(first.map((r) => r.current)).toEqual([1, 1, 1, 1]);
    const second = await b.hit(twice, now);
    expect(second.map((r) => r.current)).toEqual([2, 2, 2, 2]);
    const [alone] = await a.hit([{ name: "dup", windowMs: 60_000 }], now);
    expect(alone?.current).toBe(3);
  });

  it("reads the previous bucket and the elapsed share of the current one", async () => {
    const { a, b } = handles();
    const w = 10_000;
    await a.hit([{ name: "c2", windowMs: w }], 5 * w + 1);
    await a.hit([{ name: "c2", windowMs: w }], 5 * w + 2);
    const [r] = await b.hit([{ name: "c2", windowMs: w }], 6 * w + w / 4);
    expect(r).toEqual({ current: 1, previous: 2, elapsed: 0.25 });
    // The same name over another window width is a separate counter.
    const [other] = await b.hit([{ name: "c2", windowMs: w * 2 }], 6 * w + w / 4);
    expect(other?.current).toBe(1);
    // Counters that expire by themselves (Redis) have nothing to purge.
    const purged = await a.purgeExpired(100 * w);
    if (options.countersExpireThemselves) expect(purged).toBe(0);
    else expect(purged).toBeGreaterThan(0);
    const [fresh] = await a.hit([{ name: "c2", windowMs: w }], 100 * w);
    expect(fresh).toEqual({ current: 1, previous: 0, elapsed: 0 });
  });

  it("purges expired counters in chunks: all of them, and none that can still be read", async () => {
    const { a, b } = handles();
    const w = 60_000;
    const old = Array.from({ length: PURGE_CHUNK + 250 }, (_, i) => ({ name: `bulk${i}`, windowMs: w }));
    for (let i = 0; i < old.length; i += 250) await a.hit(old.slice(i, i + 250), 1000 * w);
    await a.hit([{ name: "kept", windowMs: w }], 5000 * w);
    const purged = await b.purgeExpired(3000 * w);
    if (options.countersExpireThemselves) expect(purged).toBe(0);
    else expect(purged).toBeGreaterThanOrEqual(old.length);
    expect(await a.purgeExpired(3000 * w)).toBe(0);
    const [kept] = await a.hit([{ name: "kept", windowMs: w }], 5000 * w);
    expect(kept?.current).toBe(2);
  });

  it("counts a call whose counters belong to several tenants, and to none, each once", async () => {
    const { a, b } = handles();
    const now = 4_000_000;
    const mixed = [
      { name: "mix-t1", windowMs: 60_000, tenantId: "t1" },
      { name: "mix-t2", windowMs: 60_000, tenantId: "t2" },
      { name: "mix-none", windowMs: 60_000 },
      { name: "mix-t1b", windowMs: 60_000, tenantId: "t1" },
      { name: "mix-t2", windowMs: 60_000, tenantId: "t2" },
    ];
    const first = await a.hit(mixed, now);
    expect(first.map((r) => r.current)).toEqual([1, 1, 1, 1, 1]);
    const second = await b.hit(mixed, now + 60_000);
    expect(second.map((r) => [r.current, r.previous])).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
  });
}

/** The counter contract alone, on two handles `open` and `openSecond` give (two processes' worth). */
export function counterContract(
  name: string,
  open: () => Promise<CounterStore & { close(): Promise<void> }>,
  openSecond: () => Promise<CounterStore & { close(): Promise<void> }> = open,
  options: CounterContractOptions = {},
): void {
  describe(`counter contract: ${name}`, () => {
    let a: CounterStore & { close(): Promise<void> };
    let b: CounterStore & { close(): Promise<void> };
    beforeAll(async () => {
      a = await open();
      b = await openSecond();
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
    });
    counterTests(() => ({ a, b }), options);
  });
}
