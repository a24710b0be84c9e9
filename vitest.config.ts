import { defineConfig } from "vitest/config";

/**
 * Two projects, run one after the other by `npm test`: everything else in parallel, then the suites
 * whose checks depend on verify meeting its deadline under load (real server processes, fault
 * injection, the evaluation replay), the load tests (`*.load.test.ts`, which saturate the machine
 * on purpose), the packages installed from their tarballs (`*.install.test.ts`, an npm install that
 * compiles better-sqlite3) and the input fuzzers (`*.fuzz.test.ts`, 3,000 bodies per endpoint from a
 * new seed each run) one file at a time, so they do not compete with other test files for its two cores.
 */
export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          // The test files share their worker's modules instead of importing the app anew each (no
          // test mocks a module or stubs a global): imports were 234 s of 822 s in one run.
          isolate: false,
          // Three at a time on this project's two cores: vitest's default for a run is one fewer than the
          // cores, and these files spend more of their time waiting (browsers, sockets, real processes)
          // than computing. 157 s with one, 107 s with three on one machine.
          maxWorkers: 3,
          include: ["packages/*/src/**/*.test.ts"],
          exclude: [
            "packages/*/src/scaleout/**",
            "packages/*/src/eval/**",
            "packages/*/src/**/*.load.test.ts",
            "packages/*/src/**/*.fuzz.test.ts",
            "packages/*/src/**/*.install.test.ts",
          ],
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          include: [
            "examples/*/*.test.ts",
            "packages/*/src/scaleout/**/*.test.ts",
            "packages/*/src/eval/**/*.test.ts",
            "packages/*/src/**/*.load.test.ts",
            "packages/*/src/**/*.fuzz.test.ts",
            "packages/*/src/**/*.install.test.ts",
          ],
          fileParallelism: false,
          // One worker for the whole project, its modules imported once: each of these files starts its
          // own servers and processes and leaves nothing behind in the worker (21 s of imports otherwise).
          isolate: false,
        },
      },
    ],
  },
});
