import { describe, expect, it } from "vitest";
import { skipLoudly } from "../../packages/server/src/testing/skip.js";
import { missingTools } from "./lib/display.mjs";
import { evaluate } from "./lib/evaluate.mjs";
import { formatTable } from "./lib/table.mjs";

/**
 * The people of `npm run eval:real` against a real Warden and the example signup app, one signup
 * each (typed at a person's pace: 25-30 s a signup): a person in a real Chromium window, typing and
 * clicking through X input events, gets every account and is never refused; a person whose browser
 * extension rewrites the User-Agent gets every account too (after a challenge at most). What the bots
 * get is the measurement of `npm run eval:real` (docs/benchmarks.md), not asserted here: it depends
 * on the decision model's tuning, and all of them took minutes of this suite.
 */
const SUITE = "people in real Chromium windows against examples/signup";
const missing = missingTools();

if (missing.length > 0) {
  skipLoudly(
    SUITE,
    `${missing.join(", ")} missing (apt-get install -y chromium xvfb xdotool): ${SUITE} is SKIPPED`,
  );
} else {
  describe(SUITE, () => {
    it("people get every account and are never denied; the table is printed", async () => {
      const { rows, seconds } = await evaluate({
        signups: 1,
        only: ["person-chromium-xdotool", "person-chromium-ua-switcher"],
      });
      process.stdout.write(`\n${SUITE}: ${seconds} s\n${formatTable(rows, { reasons: true })}\n`);
      const person = rows.find((r) => r.id === "person-chromium-xdotool");
      expect(person?.skipped).toBeUndefined();
      expect(person).toMatchObject({ n: 1, created: 1, denied: 0, everDenied: 0 });
      const switcher = rows.find((r) => r.id === "person-chromium-ua-switcher");
      expect(switcher?.skipped).toBeUndefined();
      expect(switcher).toMatchObject({ n: 1, created: 1, denied: 0, everDenied: 0 });
    }, 400_000);
  });
}
