import type { EnforcementMode } from "../../domain.js";
import type { Caller } from "../caller.js";

/**
 * log_only applies when the tenant or the key is set to it, or the integration sets context.logOnly.
 * Computed by the server, reported in the response, never a token claim (docs/api.md#verdicttoken).
 */
export function enforcementModeFor(
  caller: Caller | undefined,
  contextLogOnly: boolean | undefined,
): EnforcementMode {
  if (contextLogOnly === true) return "log_only";
  if (caller && (caller.tenant.logOnly || caller.key.logOnly)) return "log_only";
  return "enforce";
}
