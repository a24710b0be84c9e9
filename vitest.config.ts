import { defineConfig } from "vitest/config";

/**
 * Two projects, run one after the other by `npm test`: everything else in parallel, then the
 * scale-out suites (real server processes, fault injection) alone, so that their timing-sensitive
 * checks (verify's deadline) do not compete with other test files for this machine's two cores.
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
          exclude: ["packages/*/src/scaleout/**"],
        },
      },
      {
        extends: true,
        test: {
          name: "scaleout",
          include: ["packages/*/src/scaleout/**/*.test.ts"],
          fileParallelism: false,
        },
      },
    ],
  },
});
