import { describe, expect, it } from "vitest";
import { skipLoudly } from "../../packages/server/src/testing/skip.js";
import { evaluate } from "./lib/evaluate.mjs";
import { formatTable } from "./lib/table.mjs";

/**
 * One TLS-impersonating client of `npm run eval:real` (impit with its Chrome 151 profile) for one
 * signup against a real Warden and the example app, through a door that computes its JA4: the page,
 * its scripts, the page token and the form go through, the app answers the form, and the door saw
 * Chrome's cipher list in the ClientHello (JA4's second part), not Node's. What the signup got is the
 * measurement of `npm run eval:real` (docs/benchmarks.md), not asserted here.
 */
const SUITE = "a TLS-impersonating HTTP client (impit) against examples/signup";
/** JA4_b of Chrome's ClientHello (its 15 cipher suites, sorted and hashed). */
const CHROME_CIPHERS = "8daaf6152771";

let loads = true;
try {
  await import("impit");
} catch {
  loads = false;
}

if (!loads) {
  skipLoudly(SUITE, `impit's native binding did not load (npm install): ${SUITE} is SKIPPED`);
} else {
  describe(SUITE, () => {
    it("one impit signup runs end to end and presents Chrome's TLS at the door", async () => {
      const { rows, seconds } = await evaluate({ signups: 1, only: ["impit-chrome151"] });
      process.stdout.write(`\n${SUITE}: ${seconds} s\n${formatTable(rows, { reasons: true })}\n`);
      const row = rows[0];
      expect(row?.skipped).toBeUndefined();
      expect(row).toMatchObject({ id: "impit-chrome151", n: 1, other: 0, errors: [] });
      expect(row && row.allowed + row.challenged + row.denied).toBe(1);
      expect([...(row?.tlsJa4 ?? [])].every((j) => j.split("_")[1] === CHROME_CIPHERS)).toBe(true);
    }, 60_000);
  });
}
