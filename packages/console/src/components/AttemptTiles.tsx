import { count, percent } from "../format.js";
import type { AttemptTotals } from "../stats.js";
import { Tile } from "./Tile.js";

/**
 * Attempts by how they ended: a challenged attempt whose clear a re-verify redeemed counts once, as
 * cleared (not as a challenge and an allow), in the period of its first verdict.
 */
export function AttemptTiles({ t, logOnly }: { t: AttemptTotals; logOnly: number }) {
  return (
    <dl class="tiles">
      <Tile label="Attempts" value={count(t.total)} testId="attempts-total" />
      <Tile
        label="Allowed at once"
        value={count(t.allowed)}
        testId="attempts-allowed"
        tone="allow"
        detail={percent(t.allowed, t.total)}
      />
      <Tile
        label="Challenged, then cleared"
        value={count(t.cleared)}
        testId="attempts-cleared"
        tone="challenge"
        detail={percent(t.cleared, t.total)}
      />
      <Tile
        label="Challenged, not cleared"
        value={count(t.challenged)}
        testId="attempts-challenged"
        tone="challenge"
        detail={percent(t.challenged, t.total)}
      />
      <Tile
        label="Denied"
        value={count(t.denied)}
        testId="attempts-denied"
        tone="deny"
        detail={percent(t.denied, t.total)}
      />
      <Tile
        label="Degraded"
        value={count(t.degraded)}
        testId="attempts-degraded"
        detail={percent(t.degraded, t.total)}
      />
      <Tile label="Log-only verdicts" value={count(logOnly)} testId="count-log-only" />
    </dl>
  );
}
