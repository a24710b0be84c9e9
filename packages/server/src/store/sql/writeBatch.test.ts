import { describe, expect, it } from "vitest";
import { type JobOutcome, WriteBatch } from "./writeBatch.js";

/** A batch runner that records each batch it was given and answers when released. */
function recorder(answer: (job: number) => JobOutcome<number> = (j) => ({ ok: true, value: j * 10 })) {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  const run = (jobs: number[]) => {
    batches.push(jobs);
    return new Promise<JobOutcome<number>[]>((resolve) => releases.push(() => resolve(jobs.map(answer))));
  };
  return {
    batches,
    run,
    releaseAll: () => {
      for (const release of releases.splice(0)) release();
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("write batches (group commit for PostgreSQL's verify writes)", () => {
  it("sends the jobs of one turn as one batch and answers each its own outcome, in order", async () => {
    const r = recorder();
    const batch = new WriteBatch({ run: r.run, maxInFlight: 2, maxJobs: 100 });
    const answers = [1, 2, 3].map((j) => batch.submit(j));
    await turn();
    expect(r.batches).toEqual([[1, 2, 3]]);
    r.releaseAll();
    expect(await Promise.all(answers)).toEqual([10, 20, 30]);
  });

  it("gathers what arrives while its batches are in flight and sends it as one batch when one returns", async () => {
    const r = recorder();
    const batch = new WriteBatch({ run: r.run, maxInFlight: 1, maxJobs: 100 });
    const first = batch.submit(1);
    await turn();
    const later = [2, 3, 4].map((j) => batch.submit(j));
    await turn();
    expect(r.batches).toEqual([[1]]);
    r.releaseAll();
    expect(await first).toBe(10);
    await turn();
    expect(r.batches).toEqual([[1], [2, 3, 4]]);
    r.releaseAll();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  it("never holds more than maxJobs in one batch", async () => {
    const r = recorder();
    const batch = new WriteBatch({ run: r.run, maxInFlight: 3, maxJobs: 2 });
    const answers = [1, 2, 3, 4, 5].map((j) => batch.submit(j));
    await turn();
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
    r.releaseAll();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50]);
  });

  it("asks each job as its batch leaves; a job refused then is dropped, never sent", async () => {
    const r = recorder();
    const refused = new Set([2]);
    const batch = new WriteBatch({
      run: r.run,
      maxInFlight: 1,
      maxJobs: 100,
      admit: (j: number) => !refused.has(j),
      dropped: () => new Error("dropped at the deadline"),
    });
    const answers = [1, 2, 3].map((j) => batch.submit(j).catch((e: Error) => e.message));
    await turn();
    expect(r.batches).toEqual([[1, 3]]);
    r.releaseAll();
    expect(await Promise.all(answers)).toEqual([10, "dropped at the deadline", 30]);
  });

  it("fails one job alone when its outcome is a failure, and every job when the batch throws", async () => {
    const r = recorder((j) =>
      j === 2 ? { ok: false, error: new Error("refused") } : { ok: true, value: j },
    );
    const batch = new WriteBatch({ run: r.run, maxInFlight: 1, maxJobs: 100 });
    const answers = [1, 2, 3].map((j) => batch.submit(j).catch((e: Error) => e.message));
    await turn();
    r.releaseAll();
    expect(await Promise.all(answers)).toEqual([1, "refused", 3]);

    let calls = 0;
    const flaky = new WriteBatch<number, number>({
      run: async (jobs) => {
        calls++;
        if (calls === 1) throw new Error("connection lost");
        return jobs.map((j) => ({ ok: true, value: j }));
      },
      maxInFlight: 1,
      maxJobs: 100,
    });
    const failed = [1, 2].map((j) => flaky.submit(j).catch((e: Error) => e.message));
    expect(await Promise.all(failed)).toEqual(["connection lost", "connection lost"]);
    // The failed batch frees its place: the next one goes out and answers.
    expect(await flaky.submit(7)).toBe(7);
  });
});
