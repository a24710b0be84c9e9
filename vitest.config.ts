import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Three projects, run one after the other by `npm test` (sequence.groupOrder): everything else in
 * parallel; then the suites that start real processes or browsers but assert only what load cannot
 * change (the people of examples/realtools get their accounts, `--workers` supervision, the packages
 * installed from their tarballs, the degraded-event spool), two files at a time; then, one file at a
 * time so they do not compete with other test files for the two cores, the suites whose checks
 * depend on verify meeting its deadline under load (real server processes, fault injection, the
 * evaluation replay, the example app's person allowed at once), the load tests (`*.load.test.ts`,
 * which saturate the machine on purpose) and the input fuzzers (`*.fuzz.test.ts`, 3,000 bodies per
 * endpoint from a new seed each run). `npm run test:unit` (vitest.unit.config.ts) runs the `main`
 * project's files that need only Node, with no build first.
 */
const SIDE_BY_SIDE = [
  "examples/realtools/realtools.e2e.test.ts",
  "packages/server/src/scaleout/workers.test.ts",
  "packages/server/src/scaleout/degradedSpool.test.ts",
  "packages/server/src/packaging/packages.install.test.ts",
];

/** The `main` project's files: every package's tests but those the two later projects run. */
export const MAIN_TESTS = {
  include: ["packages/*/src/**/*.test.ts"],
  exclude: [
    "packages/*/src/scaleout/**",
    "packages/*/src/eval/**",
    "packages/*/src/**/*.load.test.ts",
    "packages/*/src/**/*.fuzz.test.ts",
    "packages/*/src/**/*.install.test.ts",
  ],
};

/**
 * @warden/tools imports the server as it is built (`@warden/server/dist/….js`, and the test helpers a
 * tool runs from `@warden/server/dist-testing/….js`); vitest runs the server's TypeScript sources
 * instead, with no build first.
 */
export const SERVER_SOURCES = [
  {
    find: /^@warden\/server\/dist(?:-testing)?\/(.*)\.js$/,
    replacement: `${fileURLToPath(new URL("packages/server/src/", import.meta.url))}$1.ts`,
  },
];

/**
 * The side-by-side files start in SIDE_BY_SIDE's order (the two longest first), so that two at a time
 * they end together; every other file keeps vitest's order. Vitest orders by the durations it
 * recorded last time, and a fresh clone (CI) has none: by file size it started the longest file last.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SIDE_BY_SIDE.findIndex((p) => f.moduleId.endsWith(p));
      return i < 0 ? SIDE_BY_SIDE.length : i;
    };
    return sorted
      .map((file, i) => ({ file, i }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.i - b.i)
      .map(({ file }) => file);
  }
}

export default defineConfig({
  resolve: { alias: SERVER_SOURCES },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default"],
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          sequence: { groupOrder: 0 },
          // The test files share their worker's modules instead of importing the app anew each (no
          // test mocks a module or stubs a global): imports were 234 s of 822 s in one run.
          isolate: false,
          // Three at a time on this project's two cores: vitest's default for a run is one fewer than the
          // cores, and these files spend more of their time waiting (browsers, sockets, real processes)
          // than computing. 157 s with one, 107 s with three on one machine.
          maxWorkers: 3,
          ...MAIN_TESTS,
        },
      },
      {
        extends: true,
        test: {
          name: "side-by-side",
          sequence: { groupOrder: 1 },
          include: SIDE_BY_SIDE,
          // Their files wait on browsers, child processes and npm far more than they compute: two at a
          // time took 112 s where one after another took 162 s on one machine. Each file in a fresh
          // worker, so that a worker takes the next file as soon as it is free.
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          sequence: { groupOrder: 2 },
          include: [
            "examples/*/*.test.ts",
            "packages/*/src/scaleout/**/*.test.ts",
            "packages/*/src/eval/**/*.test.ts",
            "packages/*/src/**/*.load.test.ts",
            "packages/*/src/**/*.fuzz.test.ts",
            "packages/*/src/**/*.install.test.ts",
          ],
          exclude: SIDE_BY_SIDE,
          fileParallelism: false,
          // One worker for the whole project, its modules imported once: each of these files starts its
          // own servers and processes and leaves nothing behind in the worker (21 s of imports otherwise).
          isolate: false,
        },
      },
    ],
  },
});
