/**
 * The operator console's read routes (operations/insights), listed here rather than imported from the
 * routes, so that a route that disappears fails the tests that walk them.
 */
export const CONSOLE_READ_ROUTES = [
  "/v1/stats/decisions",
  "/v1/stats/attempts",
  "/v1/stats/challenges",
  "/v1/events",
  "/v1/stats/outcomes",
  "/v1/feedback/quarantined",
  "/v1/stats/calibration",
  "/v1/stats/what-if",
  "/v1/stats/reasons",
  "/v1/stats/actions",
  "/v1/stats/campaigns",
] as const;

/** The routes above that read a period (since, until): every one but the tenant's list of actions. */
export const CONSOLE_PERIOD_ROUTES = CONSOLE_READ_ROUTES.filter((r) => r !== "/v1/stats/actions");
