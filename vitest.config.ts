import { defineConfig } from "vitest/config";

/**
 * Two projects, run one after the other by `npm test`: everything else in parallel, then the suites
 * whose checks depend on verify meeting its deadline under load (real server processes, fault
 * injection, the evaluation replay) one file at a time, so they do not compete with other test files
 * for this machine's two cores.
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
          include: ["packages/*/src/**/*.test.ts"],
          exclude: ["packages/*/src/scaleout/**", "packages/*/src/eval/**"],
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          include: ["packages/*/src/scaleout/**/*.test.ts", "packages/*/src/eval/**/*.test.ts"],
          fileParallelism: false,
        },
      },
    ],
  },
});
