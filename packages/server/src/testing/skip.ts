import { describe, it } from "vitest";

/**
 * A suite whose server is unreachable: a banner on stderr and `suite` registered as skipped, so the
 * skip shows in the results and never passes silently.
 */
export function skipLoudly(suite: string, banner: string): undefined {
  process.stderr.write(`\n${"!".repeat(banner.length)}\n${banner}\n${"!".repeat(banner.length)}\n\n`);
  describe(suite, () => {
    it.skip(`SKIPPED: ${banner}`, () => undefined);
  });
  return undefined;
}
