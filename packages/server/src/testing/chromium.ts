import { CHROMIUM_PATH, chromiumInstalled } from "../../../browser/tooling/chromium.mjs";
import { skipLoudly } from "./skip.js";

/**
 * Whether Debian's Chromium is there for a browser suite; when it is not, says so in a banner and
 * registers `suite` as skipped (never a silent pass).
 */
export function chromiumOrSkip(suite: string): boolean {
  if (chromiumInstalled()) return true;
  skipLoudly(
    suite,
    `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium): ${suite} is SKIPPED`,
  );
  return false;
}
