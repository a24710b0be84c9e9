import { describe, expect, it } from "vitest";
import { skipLoudly } from "../../packages/server/src/testing/skip.js";
import { missingTools } from "./lib/display.mjs";
import { evaluate } from "./lib/evaluate.mjs";
import { formatTable } from "./lib/table.mjs";

/**
 * The small version of `npm run eval:real`: every client class of examples/realtools against a real
 * Warden and the example signup app, 2 signups per class. What is asserted
 * holds whatever the decision model's tuning: a person in a real Chromium window, typing and clicking
 * through X input events, gets every account and is never refused. The bots' rows are printed, not
 * asserted (they are the measurement, see README.md).
 */
const SUITE = "off-the-shelf automation and a person against examples/signup (small run)";
const missing = missingTools();

if (missing.length > 0) {
  skipLoudly(
    SUITE,
    `${missing.join(", ")} missing (apt-get install -y chromium xvfb xdotool): ${SUITE} is SKIPPED`,
  );
} else {
  describe(SUITE, () => {
    it("the person gets every account and is never denied; the table is printed", async () => {
      const { rows, seconds } = await evaluate({ signups: 2 });
      process.stdout.write(`\n${SUITE}: ${seconds} s\n${formatTable(rows, { reasons: true })}\n`);
      const person = rows.find((r) => r.id === "person-chromium-xdotool");
      expect(person?.skipped).toBeUndefined();
      expect(person).toMatchObject({ n: 2, created: 2, denied: 0, everDenied: 0 });
    }, 400_000);
  });
}
