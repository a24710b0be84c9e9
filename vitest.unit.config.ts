import { defineConfig } from "vitest/config";
import { MAIN_TESTS, SERVER_SOURCES } from "./vitest.config.js";

/**
 * `npm run test:unit`: the `main` project's files that need nothing but Node, run from the TypeScript
 * sources with no build first. They drive the app in process (`inject()` or a listening socket) on
 * SQLite files of their own. The one built output they read is the console's assets, which a few of
 * them serve (`packages/server/assets/console/`, built by `npm install`).
 * Left out, and run by `npm test`: every file of the two later projects, and the files below, which
 * need a PostgreSQL or Redis server, a Chromium, or the compiled server (`dist/`, `bin/warden.js`).
 * architectureDocs.test.ts checks both ways: no file the loop runs uses what these need, and each
 * file left out here does.
 */
export const NEEDS_MORE_THAN_NODE = [
  // Chromium (testing/chromium.ts, playwright).
  "packages/*/src/**/*.browser.test.ts",
  // PostgreSQL (testing/postgres.ts) and Redis (testing/redis.ts).
  "packages/server/src/store/postgres/abandonedWrites.test.ts",
  "packages/server/src/store/postgres/eventPartitions.test.ts",
  "packages/server/src/store/postgres/migrationSchema.test.ts",
  "packages/server/src/store/postgres/namedStatements.test.ts",
  "packages/server/src/store/postgres/patientPool.test.ts",
  "packages/server/src/store/postgres/postgresApp.test.ts",
  "packages/server/src/store/postgres/postgresContract.test.ts",
  "packages/server/src/store/postgres/postgresReadiness.test.ts",
  "packages/server/src/store/postgres/readReplica.test.ts",
  "packages/server/src/store/postgres/readSlots.test.ts",
  "packages/server/src/store/postgres/reuseGuard.test.ts",
  "packages/server/src/store/postgres/runtimeRole.test.ts",
  "packages/server/src/store/postgres/verifyWriteBatches.test.ts",
  "packages/server/src/store/redis/redisApp.test.ts",
  "packages/server/src/store/redis/redisContract.test.ts",
  "packages/server/src/store/idempotencyEventMigration.test.ts",
  "packages/server/src/cli/migrate.test.ts",
  "packages/server/src/cli/failedStart.test.ts",
  "packages/server/src/operations/challenge/clearOnce.security.test.ts",
  "packages/server/src/operations/feedback/dates.error.test.ts",
  "packages/server/src/operations/insights/readBudgetWorkers.test.ts",
  "packages/server/src/packaging/composeRoles.test.ts",
  // The compiled server: `warden` processes (testing/wardenProcess.ts, bin/warden.js) or dist/ modules.
  "packages/server/src/cli/cli.test.ts",
  "packages/server/src/serve.test.ts",
  "packages/server/src/store/sqlite/multiProcess.test.ts",
  "packages/server/src/store/sqlite/readWorker.test.ts",
];

export default defineConfig({
  resolve: { alias: SERVER_SOURCES },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default"],
    // As the `main` project (vitest.config.ts): modules shared by a worker's files, three workers.
    isolate: false,
    maxWorkers: 3,
    include: MAIN_TESTS.include,
    exclude: [...MAIN_TESTS.exclude, ...NEEDS_MORE_THAN_NODE],
  },
});
