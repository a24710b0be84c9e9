import { describe, it } from "vitest";

/**
 * A suite whose server or browser is missing: a banner on stderr and `suite` registered as skipped, so
 * the skip shows in the results and never passes silently. Under CI (`CI=true`, as `.ci/run` runs)
 * the suite fails instead: CI machines have every service, so a missing one is a broken run.
 */
export function skipLoudly(suite: string, banner: string): undefined {
  process.stderr.write(`\n${"!".repeat(banner.length)}\n${banner}\n${"!".repeat(banner.length)}\n\n`);
  describe(suite, () => {
    if (process.env.CI === "true") {
      it(`MISSING UNDER CI: ${banner}`, () => {
        throw new Error(`${banner} (CI must run every suite)`);
      });
    } else {
      it.skip(`SKIPPED: ${banner}`, () => undefined);
    }
  });
  return undefined;
}
